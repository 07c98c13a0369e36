package events

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// History is each lock's past as the exporter's own Events tell it, read once at start
// (Rebuild): what a restarted replica, or one that was not the writer, cannot have seen. The
// status pages put it before the history they observed (statuspage.Rebuilt), each tenure
// marked Rebuilt. It is keyed by the lock's UID, so a recreated lock's Events never join
// the new incarnation's history.
type History struct {
	mu    sync.RWMutex
	byUID map[types.UID][]lock.Tenure
}

// Tenures implements statuspage.Rebuilt: uid's rebuilt tenures, oldest first. The last may
// be open (Holding): the Events never showed it end, because it is the current tenure or
// ended between two writers; the pages decide against what they observed (statuspage.merge).
func (h *History) Tenures(uid string) []lock.Tenure {
	if h == nil {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.byUID[types.UID(uid)]
}

// RebuildStats says what Rebuild read.
type RebuildStats struct {
	Events, Locks, Tenures, Unreadable int
	Took                               time.Duration
}

// listPage is how many Events one list request asks for.
const listPage = 500

// Rebuild lists the Events the exporter wrote (reportingController) in namespaces (all when
// empty), and rebuilds from them each lock's last tenures, at most max per lock. Notes it
// cannot read are counted, not fatal: a newer exporter may word them otherwise.
func Rebuild(ctx context.Context, client kubernetes.Interface, namespaces []string, max int, h *History) (RebuildStats, error) {
	start := time.Now()
	var st RebuildStats
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	type entry struct {
		at int64
		c  Change
	}
	byUID := map[types.UID][]entry{}
	// One change is one Event; two would come from two writers in the moment one lost its
	// Lease and the next took it. They regard the same version of the lock.
	type change struct {
		uid             types.UID
		resourceVersion string
		reason          string
	}
	seen := map[change]bool{}
	for _, ns := range namespaces {
		opts := metav1.ListOptions{Limit: listPage,
			FieldSelector: fields.OneTermEqualSelector("reportingController", ReportingController).String()}
		for {
			list, err := client.EventsV1().Events(ns).List(ctx, opts)
			if err != nil {
				return st, fmt.Errorf("list Events in %s: %w", nsName(ns), err)
			}
			for i := range list.Items {
				ev := &list.Items[i]
				if ev.ReportingController != ReportingController || ev.Regarding.UID == "" {
					continue
				}
				st.Events++
				if k := (change{ev.Regarding.UID, ev.Regarding.ResourceVersion, ev.Reason}); k.resourceVersion != "" {
					if seen[k] {
						continue
					}
					seen[k] = true
				}
				c, err := parseNote(ev.Reason, ev.Note)
				if err != nil {
					if makesHistory(ev.Reason) {
						st.Unreadable++
					}
					continue
				}
				byUID[ev.Regarding.UID] = append(byUID[ev.Regarding.UID], entry{eventTime(ev), c})
			}
			if list.Continue == "" {
				break
			}
			opts.Continue = list.Continue
		}
	}
	out := make(map[types.UID][]lock.Tenure, len(byUID))
	for uid, es := range byUID {
		slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.at, b.at) })
		var b tenures
		for _, e := range es {
			b.apply(e.at, e.c)
		}
		if t := b.last(max); len(t) > 0 {
			out[uid] = t
			st.Tenures += len(t)
		}
	}
	st.Locks = len(out)
	h.mu.Lock()
	h.byUID = out
	h.mu.Unlock()
	st.Took = time.Since(start)
	return st, nil
}

func makesHistory(reason string) bool {
	return reason == ReasonLeaderChanged || reason == ReasonLeaseReleased || reason == ReasonLeaseExpired
}

func nsName(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return "namespace " + ns
}

// eventTime is when an Event says its change happened, Unix µs: eventTime, which the
// recorder sets when the exporter saw it; for an Event without one, its creation.
func eventTime(ev *eventsv1.Event) int64 {
	if !ev.EventTime.IsZero() {
		return ev.EventTime.UnixMicro()
	}
	if !ev.DeprecatedFirstTimestamp.IsZero() {
		return ev.DeprecatedFirstTimestamp.UnixMicro()
	}
	return ev.CreationTimestamp.UnixMicro()
}

// tenures rebuilds a lock's tenures from its Events, oldest first.
type tenures []lock.Tenure

// apply adds one Event's change, at at (Unix µs).
func (ts *tenures) apply(at int64, c Change) {
	switch c.Reason {
	case ReasonLeaderChanged:
		to := at
		if c.Leaderless > 0 {
			to -= c.Leaderless.Microseconds()
		}
		if n := len(*ts); n > 0 && (*ts)[n-1].Ended == lock.Holding && (*ts)[n-1].Holder != c.Old {
			ts.end("", to, unknown, lock.Unknown) // another holder still open: the Events missed its end
		}
		ts.end(c.Old, to, c.Held, c.Ended)
		*ts = append(*ts, lock.Tenure{Holder: c.New, From: at, LastRenew: at, Live: c.Ended != lock.Unknown, Rebuilt: true})
	case ReasonLeaseReleased:
		ts.end(c.Old, at, c.Held, c.Ended)
	case ReasonLeaseExpired:
		ts.end(c.Old, at-c.Leaderless.Microseconds(), c.Held, lock.Expired)
	}
}

// end ends holder's tenure at to: the open one, or, when the Events did not show it begin,
// one of held length (none when that is unknown too). holder "" ends whatever is open.
// Another holder's tenure still open then ended, unknown how, when this one began: the
// Events of what happened between were not written (a change between two writers).
func (ts *tenures) end(holder string, to int64, held time.Duration, ended lock.Ending) {
	var last *lock.Tenure
	if n := len(*ts); n > 0 {
		last = &(*ts)[n-1]
	}
	switch {
	case last != nil && last.Ended == lock.Holding && (holder == "" || last.Holder == holder):
		last.To, last.LastRenew, last.Ended = max(to, last.From), max(to, last.From), ended
		return
	case last != nil && last.Ended != lock.Holding && last.Holder == holder:
		return // already ended (an expiry, then the change that followed it)
	case holder == "" || held < 0:
		return
	}
	from := to - held.Microseconds()
	if last != nil && last.Ended == lock.Holding {
		last.To, last.LastRenew, last.Ended = max(from, last.From), max(from, last.From), lock.Unknown
	}
	*ts = append(*ts, lock.Tenure{Holder: holder, From: from, LastRenew: to, To: to, Ended: ended, Rebuilt: true})
}

// last returns the last max tenures.
func (ts tenures) last(max int) []lock.Tenure {
	if len(ts) > max {
		ts = ts[len(ts)-max:]
	}
	return slices.Clip([]lock.Tenure(ts))
}
