package collector

import (
	"bytes"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// eventBetweenWalks is the informer's cache with one event landing between two of a scrape's
// walks, as the reflector's goroutine may deliver it while a scrape is being written.
type eventBetweenWalks struct {
	*informer.Cache
	walks, before int    // before: the walk (counted from 1) that the event precedes
	event         func() // returns once the cache holds what the event brought
}

func (v *eventBetweenWalks) Snapshot(nodes func(*lock.Lease) bool) informer.Snapshot {
	return walksWithEvent{v.Cache.Snapshot(nodes), v}
}

// walksWithEvent is a scrape's snapshot whose walks count, and let the event land, in v.
type walksWithEvent struct {
	informer.Snapshot
	v *eventBetweenWalks
}

func (s walksWithEvent) InOrder(o lock.Order, nodes func(*lock.Lease) bool, fn func([]*lock.Lease) bool) {
	if s.v.walks++; s.v.walks == s.v.before {
		s.v.event()
	}
	s.Snapshot.InOrder(o, nodes, fn)
}

// midScrape scrapes view, whose locks include team-a/steady, three times: once before the
// event, once with the event landing between the writer's second and third walks
// (lease_acquire_timestamp_seconds and lease_duration_seconds are written, lease_held comes
// next: lease_expiry_timestamp_seconds is not exported by default), and once after. It returns
// each scrape's sample lines of team-a/<name>.
func midScrape(t *testing.T, name string, view *informer.Cache, event func()) (before, during, after string) {
	t.Helper()
	return midScrapeOf(t, "team-a", name, view, Settings{}, 3, event)
}

// midScrapeOf is midScrape for ns/<name>, with settings set (their clock scrapeTime), the
// event landing before the writer's walk walk (counted from 1).
func midScrapeOf(t *testing.T, ns, name string, view *informer.Cache, set Settings, walk int, event func()) (before, during, after string) {
	t.Helper()
	v := &eventBetweenWalks{Cache: view, event: event} // before 0: no event
	set.Now = func() time.Time { return scrapeTime }
	w := NewTextWriter(v, set)
	scrape := func() string {
		t.Helper()
		var b bytes.Buffer
		if err := w.Write(&b, nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), `lease="steady"`) {
			t.Fatalf("the scrape has no sample of team-a/steady, cached before it:\n%s", b.String())
		}
		var lines []string
		for line := range strings.Lines(b.String()) {
			if !strings.HasPrefix(line, "#") && strings.Contains(line, `lease="`+name+`",namespace="`+ns+`"`) {
				lines = append(lines, line)
			}
		}
		return strings.Join(lines, "")
	}
	before = scrape()
	landed := false
	v.walks, v.before, v.event = 0, walk, func() { event(); landed = true }
	during = scrape()
	if !landed {
		t.Fatalf("the scrape walked the cache %d times: the event never landed", v.walks)
	}
	v.before = 0
	after = scrape()
	if before == after {
		t.Fatalf("harness: the event changed nothing in %s/%s's samples:\n%s", ns, name, before)
	}
	return before, during, after
}

// wantOneRecord fails unless the scrape written while the event landed shows the lock key as
// one of the scrapes around it does: in every family of the record before the event or of the
// one after (none when there is none), never some families from each.
func wantOneRecord(t *testing.T, key, before, during, after string) {
	t.Helper()
	if during != before && during != after {
		t.Errorf("the scrape written while %s changed mixes its records:\n%s\nwant every family from one record, either as before:\n%s\nor as after:\n%s",
			key, during, orNone(before), orNone(after))
	}
}

func orNone(lines string) string {
	if lines == "" {
		return "(no sample)\n"
	}
	return lines
}

// awaitCached waits until the cache's record of team-a/<name> satisfies ok (nil: no record).
func awaitCached(t *testing.T, view *informer.Cache, name string, ok func(*lock.Lease) bool) {
	t.Helper()
	awaitCachedIn(t, view, "team-a", name, ok)
}

func awaitCachedIn(t *testing.T, view *informer.Cache, ns, name string, ok func(*lock.Lease) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(view.Lookup(lock.KindLease, ns, name)); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the informer never cached the event of %s/%s", ns, name)
		}
	}
}

// A scrape is one read of the cache: a lock that arrives while a scrape is written is in
// every family of that scrape or in none, never in the families written after it came only.
// That tear stopped TestAnnotationLocks/PythonConfigMapLockFailover once: the Python
// elector's new ConfigMap lock with lease_held 1 and lease_info, but no
// lease_acquire_timestamp_seconds or lease_duration_seconds, the two families written first
// (the writer walked the cache once per family from fb51363).
func TestTextWriterLockArrivingMidScrape(t *testing.T) {
	view, client := syncedViewWithClient(t, lease("team-a", "steady", held("pod-0", 2*time.Second, 15)))
	before, during, after := midScrape(t, "arrived", view, func() {
		create(t, client, lease("team-a", "arrived", held("pod-1", time.Second, 15)))
		awaitCached(t, view, "arrived", func(l *lock.Lease) bool { return l != nil })
	})
	wantOneRecord(t, "team-a/arrived", before, during, after)
	if !strings.Contains(after, "lease_held{") || !strings.Contains(after, "lease_duration_seconds{") {
		t.Errorf("the scrape after team-a/arrived was cached lacks its families:\n%s", after)
	}
}

// A lock deleted while a scrape is written is in every family of that scrape or in none.
func TestTextWriterLockDeletedMidScrape(t *testing.T) {
	view, client := syncedViewWithClient(t, lease("team-a", "steady", held("pod-0", 2*time.Second, 15)),
		lease("team-a", "leaving", held("pod-1", time.Second, 15)))
	before, during, after := midScrape(t, "leaving", view, func() {
		if err := client.CoordinationV1().Leases("team-a").Delete(t.Context(), "leaving", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		awaitCached(t, view, "leaving", func(l *lock.Lease) bool { return l == nil })
	})
	wantOneRecord(t, "team-a/leaving", before, during, after)
}

// A lock taken over by another holder while a scrape is written shows one record in every
// family of that scrape: the old holder's acquire time, duration and holder label, or the new
// holder's, never the old acquire time beside the new holder.
func TestTextWriterLockTakenOverMidScrape(t *testing.T) {
	contested := lease("team-a", "contested", held("pod-0", 2*time.Second, 15), transitions(3))
	view, client := syncedViewWithClient(t, lease("team-a", "steady", held("pod-0", 2*time.Second, 15)), contested)
	before, during, after := midScrape(t, "contested", view, func() {
		next := contested.DeepCopy()
		held("pod-1", time.Second, 30)(next)
		acquired := metav1.NewMicroTime(scrapeTime.Add(-time.Second))
		next.Spec.AcquireTime = &acquired
		transitions(4)(next)
		if _, err := client.CoordinationV1().Leases("team-a").Update(t.Context(), next, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		awaitCached(t, view, "contested", func(l *lock.Lease) bool { return l != nil && l.Holder == "pod-1" })
	})
	wantOneRecord(t, "team-a/contested", before, during, after)
	if !strings.Contains(after, `holder="pod-1"`) || strings.Contains(after, `holder="pod-0"`) {
		t.Errorf("the scrape after the takeover does not name pod-1 alone:\n%s", after)
	}
}

// A node heartbeat, whose series are written with --metrics.node-heartbeats=per-lease, is
// in every family of a scrape or in none too: the scrape reads the node heartbeats once, at
// the first family that writes any (lease_held, the third walk), and this one arrives before
// the fourth, between lease_held and lease_observed_renew_timestamp_seconds.
func TestTextWriterNodeHeartbeatArrivingMidScrape(t *testing.T) {
	view, client := syncedViewWithClient(t, lease("team-a", "steady", held("pod-0", 2*time.Second, 15)))
	before, during, after := midScrapeOf(t, "kube-node-lease", "node-1", view, Settings{PerLeaseNodeHeartbeats: true}, 4, func() {
		create(t, client, lease("kube-node-lease", "node-1", held("node-1", time.Second, 40)))
		awaitCachedIn(t, view, "kube-node-lease", "node-1", func(l *lock.Lease) bool { return l != nil })
	})
	wantOneRecord(t, "kube-node-lease/node-1", before, during, after)
	if !strings.Contains(after, "lease_held{") || !strings.Contains(after, "lease_observed_renew_timestamp_seconds{") {
		t.Errorf("the scrape after kube-node-lease/node-1 was cached lacks its families:\n%s", after)
	}
}

func create(t *testing.T, client *fake.Clientset, l *coordinationv1.Lease) {
	t.Helper()
	if _, err := client.CoordinationV1().Leases(l.Namespace).Create(t.Context(), l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
