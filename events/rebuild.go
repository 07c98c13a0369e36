package events

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/lock"
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
// ended between two writers; the pages decide against what they observed
// (lock.HistorySnapshot.AfterRebuilt). A tenure whose Events showed neither its start nor
// its length has none (lock.Tenure.StartKnown).
func (h *History) Tenures(uid string) []lock.Tenure {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.byUID[types.UID(uid)]
}

// RebuildStats says what Rebuild read, and what it skipped, by cause.
type RebuildStats struct {
	Events, Locks, Tenures int
	Skipped                Skipped
	Took                   time.Duration
}

// Skipped counts the Events Rebuild did not take, each under the first check it failed.
type Skipped struct {
	// Oversized: a note longer than maxNote, which no exporter writes, or an Event whose JSON
	// is longer than maxEventJSON; skipped unread (the latter undecoded).
	Oversized int
	// Reason: a reason that is none of the exporter's.
	Reason int
	// Namespace: the Event is not in the namespace of the lock it regards.
	Namespace int
	// UnknownLock: its regarding (kind, namespace, name, UID) names no lock the exporter
	// has seen, live or deleted.
	UnknownLock int
	// Unreadable: a note not in the exporter's wording (a newer exporter may word it otherwise).
	Unreadable int
	// OverBudget: taken after the rebuild held maxHeld bytes.
	OverBudget int
}

// Log attributes, one per cause.
func (s Skipped) attrs() []any {
	return []any{"skipped_oversized", s.Oversized, "skipped_reason", s.Reason, "skipped_namespace", s.Namespace,
		"skipped_unknown_lock", s.UnknownLock, "skipped_unreadable", s.Unreadable, "skipped_over_budget", s.OverBudget}
}

// LogAttrs are s's counts as slog key-value pairs, Skipped by cause.
func (s RebuildStats) LogAttrs() []any {
	return append([]any{"events", s.Events, "locks", s.Locks, "tenures", s.Tenures, "took", s.Took}, s.Skipped.attrs()...)
}

// Known reports whether the exporter has seen the lock ref names, by kind, namespace, name
// and UID: only such an Event can be about a lock whose page shows history.
type Known func(ref *corev1.ObjectReference) bool

// Seen is what Known asks: the cached locks and the tombstones of those deleted.
type Seen interface {
	Lookup(kind lock.Kind, namespace, name string) *lock.Lease
	RangeDeleted(fn func(*lock.Tombstone))
}

// KnownTo is Known over what v has seen now (the informer's cache, synced).
func KnownTo(v Seen) Known {
	type key struct {
		kind     lock.Kind
		ns, name string
		uid      types.UID
	}
	deleted := map[key]bool{}
	v.RangeDeleted(func(t *lock.Tombstone) {
		deleted[key{t.Lock.Kind(), t.Lock.Namespace(), t.Lock.Name(), types.UID(t.Lock.UID.String())}] = true
	})
	return func(ref *corev1.ObjectReference) bool {
		kind, ok := lock.KindNamed(ref.Kind)
		if !ok {
			return false
		}
		if l := v.Lookup(kind, ref.Namespace, ref.Name); l != nil && l.UID.String() == string(ref.UID) {
			return true
		}
		return deleted[key{kind, ref.Namespace, ref.Name, ref.UID}]
	}
}

// maxHeld bounds the bytes of the changes the rebuild holds (entry.size) until it has read
// every page: about 15,000 changes, eight times the most the exporter writes within the API
// server's 1 h Event TTL at its default rate. What arrives beyond it is counted, not held.
const maxHeld = 8 << 20

// Rebuild lists the Events the exporter wrote (reportingController) in namespaces (all when
// empty), and rebuilds from them each lock's last tenures, at most max per lock. It takes
// only Events it can check: a note of at most maxNote bytes, one of the exporter's reasons,
// in the namespace of the lock it regards, and regarding a lock known says the exporter has
// seen. Whoever may create Events in a lock's own namespace can still word one as the
// exporter would (docs/security.md). Its memory is bounded by one Event's JSON (pages.go)
// and maxHeld.
func Rebuild(ctx context.Context, client kubernetes.Interface, known Known, namespaces []string, max int, h *History) (RebuildStats, error) {
	start := time.Now()
	var st RebuildStats
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	page := pagesOf(client)
	r := rebuild{known: known, perLock: 4*max + 8, budget: maxHeld, byUID: map[types.UID][]entry{}, st: &st}
	for _, ns := range namespaces {
		opts := metav1.ListOptions{Limit: listPage,
			FieldSelector: fields.OneTermEqualSelector("reportingController", ReportingController).String()}
		for {
			var oversized int
			cont, err := page(ctx, ns, opts, r.take, &oversized)
			st.Events += oversized
			st.Skipped.Oversized += oversized
			if err != nil {
				return st, fmt.Errorf("list Events in %s: %w", nsName(ns), err)
			}
			if cont == "" {
				break
			}
			opts.Continue = cont
		}
	}
	out := make(map[types.UID][]lock.Tenure, len(r.byUID))
	for uid, es := range r.byUID {
		var b tenures
		for _, e := range r.compact(es, len(es)) {
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

// entry is one change the rebuild holds: what the Event says, when, and the version of the
// lock it regards (two writers may each write the same change once).
type entry struct {
	at int64
	rv string
	c  Change
}

// size is about what e holds, in bytes.
func (e entry) size() int {
	return int(unsafe.Sizeof(e)) + len(e.rv) + len(e.c.Old) + len(e.c.New)
}

// rebuild holds the changes read so far, each lock's newest perLock of them.
type rebuild struct {
	known   Known
	perLock int
	byUID   map[types.UID][]entry
	held    int
	budget  int // maxHeld
	st      *RebuildStats
}

// take checks one listed Event and holds its change if it passes. Nothing of ev is kept but
// copies of what the change needs, so the page it came in can be freed.
func (r *rebuild) take(ev *eventsv1.Event) {
	sk := &r.st.Skipped
	if ev.ReportingController != ReportingController {
		return
	}
	r.st.Events++
	switch {
	case len(ev.Note) > maxNote:
		sk.Oversized++
		return
	case !slices.Contains(Reasons, ev.Reason):
		sk.Reason++
		return
	case !makesHistory(ev.Reason):
		return
	case ev.Namespace != ev.Regarding.Namespace:
		sk.Namespace++
		return
	case !r.known(&ev.Regarding):
		sk.UnknownLock++
		return
	}
	c, err := parseNote(ev.Reason, ev.Note)
	if err != nil {
		sk.Unreadable++
		return
	}
	e := entry{at: eventTime(ev), rv: strings.Clone(ev.Regarding.ResourceVersion), c: c}
	if r.held+e.size() > r.budget {
		sk.OverBudget++
		return
	}
	r.held += e.size()
	uid := ev.Regarding.UID
	es, ok := r.byUID[uid]
	if !ok {
		uid = types.UID(strings.Clone(string(uid)))
	}
	es = append(es, e)
	if len(es) >= 2*r.perLock {
		es = r.compact(es, r.perLock)
	}
	r.byUID[uid] = es
}

// compact sorts a lock's changes by time, reads each change once, and keeps the newest n:
// older ones make tenures that the history's bound would drop anyway.
func (r *rebuild) compact(es []entry, n int) []entry {
	slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.at, b.at) })
	type once struct{ rv, reason string }
	seen := map[once]bool{}
	kept := es[:0]
	for _, e := range es {
		if k := (once{e.rv, e.c.Reason}); e.rv != "" {
			if seen[k] {
				r.held -= e.size()
				continue
			}
			seen[k] = true
		}
		kept = append(kept, e)
	}
	if len(kept) > n {
		for _, e := range kept[:len(kept)-n] {
			r.held -= e.size()
		}
		kept = slices.Clone(kept[len(kept)-n:])
	}
	return kept
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
// one of held length, or of unknown start when that is unknown too: the Events say it was
// held, and its end, and the page says as much. holder "" ends whatever is open. Another
// holder's tenure still open then ended, unknown how, when this one began (at its last
// known moment when that is unknown): the Events of what happened between were not written
// (a change between two writers).
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
	case holder == "":
		return
	}
	from := int64(0) // unknown
	if held >= 0 {
		from = to - held.Microseconds()
	}
	if last != nil && last.Ended == lock.Holding {
		end := max(from, last.LastRenew, last.From)
		last.To, last.LastRenew, last.Ended = end, end, lock.Unknown
	}
	*ts = append(*ts, lock.Tenure{Holder: holder, From: from, LastRenew: to, To: to, Ended: ended, Rebuilt: true})
}

// last returns the last max tenures, in an array of their own: the history keeps them for
// the process' life, and appending grew the one they were built in to twice their size.
func (ts tenures) last(max int) []lock.Tenure {
	if len(ts) > max {
		ts = ts[len(ts)-max:]
	}
	return slices.Clone([]lock.Tenure(ts))
}
