package informer

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lease-exporter/lease-exporter/lock"

	"k8s.io/client-go/tools/cache"
)

// newTestStore returns an empty Lease store whose clock advances a second per call.
func newTestStore() *store[*lock.Lease] { return newTestScope().store }

// newTestScope returns a scope of all namespaces' Leases, with an empty store whose clock
// advances a second per call, and its own health.
func newTestScope() *scope[*lock.Lease] {
	now := t0
	clock := func() time.Time { now = now.Add(time.Second); return now }
	m := newMetrics(prometheus.NewRegistry())
	h := newHealth(slog.New(slog.DiscardHandler), m, clock)
	return newScopes(leaseSource{}, observeLock, Clients{}, []string{""}, Options{}, clock, m, h)[0]
}

func cached(t *testing.T, s *store[*lock.Lease], key string) *lock.Lease {
	t.Helper()
	var found *lock.Lease
	for _, l := range s.list(nil) {
		if l.StoreKey() == key {
			found = l
		}
	}
	if found == nil {
		t.Fatalf("%s not cached", key)
	}
	return found
}

// TestObserveInEventOrder feeds renewals and holder changes of one Lease as the watch
// delivers them: each record carries the observations of the one before.
func TestObserveInEventOrder(t *testing.T) {
	s := newTestStore()
	_ = s.Add(rawLease("u1", "1", "a", t0))
	a := cached(t, s, "ns/l")
	_ = s.Update(rawLease("u1", "2", "b", t0.Add(time.Second)))
	b := cached(t, s, "ns/l")
	_ = s.Update(rawLease("u1", "3", "b", t0.Add(2*time.Second)))
	c := cached(t, s, "ns/l")
	if a.ObservedHolderChanges != 0 || b.ObservedHolderChanges != 1 || c.ObservedHolderChanges != 1 {
		t.Fatalf("holder changes a=%d b=%d c=%d, want 0 1 1", a.ObservedHolderChanges, b.ObservedHolderChanges, c.ObservedHolderChanges)
	}
	if b.FirstSeen != a.FirstSeen || c.FirstSeen != a.FirstSeen {
		t.Fatal("first-seen time not carried over")
	}
	if c.ObservedRenewTime <= b.ObservedRenewTime {
		t.Fatalf("observed renew time did not advance on a renewal: b=%d c=%d", b.ObservedRenewTime, c.ObservedRenewTime)
	}
	if a.ObservedRenewTime != t0.UnixMicro() {
		t.Fatalf("first observed renew time %d, want the reported renewTime %d (before the exporter's clock)", a.ObservedRenewTime, t0.UnixMicro())
	}
	_ = s.Update(rawLease("u1", "4", "b", t0.Add(2*time.Second))) // e.g. a label changed
	if d := cached(t, s, "ns/l"); d.ObservedRenewTime != c.ObservedRenewTime {
		t.Fatal("observed renew time changed although renewTime did not")
	}
}

func TestRelistRecreationAndDelete(t *testing.T) {
	s := newTestStore()
	if s.HasSynced() {
		t.Fatal("synced before the initial list")
	}
	_ = s.Replace([]any{rawLease("u1", "1", "a", t0)}, "1")
	if !s.HasSynced() {
		t.Fatal("not synced after the initial list")
	}
	_ = s.Update(rawLease("u1", "2", "b", t0))
	b := cached(t, s, "ns/l")

	// A relist returning the same resource version keeps the cached record itself.
	_ = s.Replace([]any{rawLease("u1", "2", "b", t0)}, "2")
	if cached(t, s, "ns/l") != b {
		t.Fatal("unchanged object produced a new record")
	}
	// A relist with a change carries the observed state over.
	_ = s.Replace([]any{rawLease("u1", "3", "c", t0)}, "3")
	if c := cached(t, s, "ns/l"); c.ObservedHolderChanges != 2 || c.FirstSeen != b.FirstSeen {
		t.Fatalf("relist lost observed state: changes=%d", c.ObservedHolderChanges)
	}
	// A new incarnation (different UID) starts counting afresh.
	_ = s.Update(rawLease("u2", "9", "d", t0))
	if d := cached(t, s, "ns/l"); d.ObservedHolderChanges != 0 || d.FirstSeen == b.FirstSeen {
		t.Fatalf("recreated lease inherited state: changes=%d", d.ObservedHolderChanges)
	}
	// Deletes arrive with the last state, or as a tombstone after a missed delete.
	_ = s.Delete(rawLease("u2", "10", "d", t0))
	_ = s.Add(rawLease("u3", "11", "e", t0))
	_ = s.Delete(cache.DeletedFinalStateUnknown{Key: "ns/l", Obj: rawLease("u3", "11", "e", t0)})
	if n := len(s.list(nil)); n != 0 {
		t.Fatalf("%d Leases cached after deletes", n)
	}
	if got := testutil.ToFloat64(s.metrics.added); got != 1 {
		t.Fatalf("added events %v, want 1 (list items are not watch events)", got)
	}
	if got := testutil.ToFloat64(s.metrics.modified); got != 2 {
		t.Fatalf("modified events %v, want 2", got)
	}
}

func TestStoreDropsOtherShards(t *testing.T) {
	s := newTestStore()
	s.keep = func(_, name string) bool { return name != "other" }
	other := rawLease("u9", "1", "a", t0)
	other.Name = "other"
	_ = s.Replace([]any{rawLease("u1", "1", "a", t0), other}, "1")
	_ = s.Add(other)
	if got := s.list(nil); len(got) != 1 || got[0].Name() != "l" {
		t.Fatalf("cached %d Leases, want only ns/l", len(got))
	}
	if got := testutil.ToFloat64(s.metrics.added); got != 1 {
		t.Fatalf("added events %v: events are counted before shard filtering", got)
	}
}

// TestStreamingListRecords checks what the reflector's temporary store gets during a
// streaming list: projected records, which Replace then observes.
func TestStreamingListRecords(t *testing.T) {
	s := newTestStore()
	rec, err := s.Transformer()(rawLease("u1", "5", "a", t0))
	if err != nil {
		t.Fatal(err)
	}
	l, ok := rec.(*lock.Lease)
	if !ok || l.Holder != "a" {
		t.Fatalf("Transformer returned %T", rec)
	}
	if again, _ := s.Transformer()(l); again != l {
		t.Fatal("Transformer is not idempotent")
	}
	_ = s.Replace([]any{l}, "5")
	if c := cached(t, s, "ns/l"); c.FirstSeen == 0 {
		t.Fatal("records from a streaming list were not observed")
	}
}

func TestPopBlocksUntilClose(t *testing.T) {
	s := newTestStore()
	done := make(chan error)
	go func() { _, err := s.Pop(nil); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("Pop returned before Close: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	s.Close()
	s.Close() // the controller and a shutdown may both close
	if err := <-done; !errors.Is(err, cache.ErrFIFOClosed) {
		t.Fatalf("Pop after Close = %v, want ErrFIFOClosed (ends the controller's processing loop)", err)
	}
}

// TestReplaceEndsInitialStream: after a streaming list, Replace is the end of the initial
// events: the scope is caught up (batched reads resume, the view may be current). After a
// plain list it says nothing: the watch that follows marks the view current.
func TestReplaceEndsInitialStream(t *testing.T) {
	s := newTestScope()
	scopeHealth := s.health.(*scopeHealth)
	_ = s.Replace(nil, "1") // plain list
	if scopeHealth.h.inInitialStream() {
		t.Fatal("a plain list started an initial stream")
	}
	s.health.opened(true)
	if !scopeHealth.h.inInitialStream() {
		t.Fatal("streaming list open but not catching up")
	}
	_ = s.Replace([]any{rawLease("u1", "1", "a", t0)}, "2")
	if scopeHealth.h.inInitialStream() || scopeHealth.state == watchCatchingUp {
		t.Fatal("still catching up after the streaming list's Replace")
	}
}
