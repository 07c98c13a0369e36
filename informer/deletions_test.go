package informer

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/tools/cache"

	"github.com/lease-exporter/lease-exporter/lock"
)

var testDeletions = lock.HistoryOptions{Tenures: 4, Renewals: 3, Classes: []lock.Class{lock.ClassLeaderElection}, Deleted: time.Hour}

// watchDeletions has the elector's store report to a deletions of its own, on its clock.
func watchDeletions(e *elector) *deletions {
	d := newDeletions(testDeletions, nil, func() time.Time { return e.j.now }, newMetrics(prometheus.NewRegistry()))
	e.j.store.superseded = d.superseded
	return d
}

func tombstones(d *deletions) []*lock.Tombstone {
	var out []*lock.Tombstone
	d.RangeDeleted(func(t *lock.Tombstone) { out = append(out, t) })
	return out
}

func deletionsCounted(d *deletions, ns string, c lock.Class) float64 {
	return testutil.ToFloat64(d.counter.vec.WithLabelValues(ns, c.String()))
}

// only returns the one tombstone d keeps.
func only(t *testing.T, d *deletions) *lock.Tombstone {
	t.Helper()
	got := tombstones(d)
	if len(got) != 1 {
		t.Fatalf("%d tombstones, want 1", len(got))
	}
	return got[0]
}

// A held lock deleted live: gone from the cache, its tombstone names the holder, says it was
// held, and its last tenure ends "deleted" at the DELETED event; counted once.
func TestDeletedWhileHeldLeavesTombstone(t *testing.T) {
	e := startElection(t, testDeletions, 10*time.Second)
	d := watchDeletions(e)
	_ = e.j.at(12 * time.Second).store.Delete(e.write("a", 10*time.Second, 2*time.Second))
	if n := len(e.j.store.list(nil)); n != 0 {
		t.Fatalf("%d locks cached after the deletion", n)
	}
	ts := only(t, d)
	if ts.Lock.Holder != "a" || !ts.Held || !ts.Live || ts.DeletedAt != sec(12*time.Second) || ts.Lock.UID.String() != uidOf("u1") {
		t.Fatalf("tombstone %+v, want u1 held by a, deleted live at 12 s", ts)
	}
	if ts.History == nil || len(ts.History.Tenures) != 1 {
		t.Fatalf("tombstone history %+v, want a's tenure", ts.History)
	}
	wantTenure(t, ts.History.Tenures[0], "a", sec(2*time.Second), sec(10*time.Second), sec(12*time.Second), lock.Deleted)
	if got := deletionsCounted(d, "ns", lock.ClassLeaderElection); got != 1 {
		t.Fatalf("deletions counted %v, want 1", got)
	}
}

// A lock nobody held when it went: after a release the tenure keeps its ending; after an
// expiry the last tenure ends "expired" at the expiry, not at the deletion.
func TestDeletedFreeLockIsNotHeld(t *testing.T) {
	e := startElection(t, testDeletions, 10*time.Second)
	d := watchDeletions(e)
	e.live("", 12*time.Second, 12*time.Second)
	_ = e.j.at(14 * time.Second).store.Delete(e.write("", 12*time.Second, 12*time.Second))
	ts := only(t, d)
	if ts.Held || ts.Lock.Holder != "" {
		t.Fatalf("released lock's tombstone %+v, want not held", ts)
	}
	wantTenure(t, ts.History.Tenures[0], "a", sec(2*time.Second), sec(12*time.Second), sec(12*time.Second), lock.Released)

	e = startElection(t, testDeletions, 10*time.Second) // a stops renewing; its 15 s lease expires at 25 s
	d = watchDeletions(e)
	_ = e.j.at(40 * time.Second).store.Delete(e.write("a", 10*time.Second, 2*time.Second))
	ts = only(t, d)
	if ts.Held || ts.Lock.Holder != "a" {
		t.Fatalf("expired lock's tombstone %+v, want a, not held", ts)
	}
	wantTenure(t, ts.History.Tenures[0], "a", sec(2*time.Second), sec(10*time.Second), sec(25*time.Second), lock.Expired)
}

// recreated checks the record of a lock recreated with UID u2 by b: a new incarnation with a
// fresh history and no holder change, and one tombstone of u1 seen live or not.
func recreated(t *testing.T, e *elector, d *deletions, live bool) {
	t.Helper()
	l := e.j.lease(t)
	if l.UID.String() != uidOf("u2") || l.ObservedHolderChanges != 0 {
		t.Fatalf("recreated lock: UID %s, %d holder changes; want u2 and none", l.UID, l.ObservedHolderChanges)
	}
	if h := e.history(t); len(h.Tenures) != 1 || h.Tenures[0].Holder != "b" {
		t.Fatalf("recreated lock's history %+v, want b's tenure only", h.Tenures)
	}
	ts := only(t, d)
	if ts.Lock.UID.String() != uidOf("u1") || ts.Live != live || ts.Lock.Holder != "a" {
		t.Fatalf("tombstone %+v, want u1 held by a, live %v", ts, live)
	}
	if got := deletionsCounted(d, "ns", lock.ClassLeaderElection); got != 1 {
		t.Fatalf("deletions counted %v, want 1", got)
	}
}

// A lock deleted and recreated (new UID) is a deletion, not a holder change, whether the
// DELETED event came, was missed (the watch went on with the new UID), or the relist after
// a broken watch found the new UID. A real holder change leaves no tombstone.
func TestRecreationIsNotAHolderChange(t *testing.T) {
	recreate := map[string]func(e *elector){
		"DELETED then ADDED": func(e *elector) {
			_ = e.j.at(12 * time.Second).store.Delete(e.write("a", 10*time.Second, 2*time.Second))
			e.uid = "u2"
			_ = e.j.at(13 * time.Second).store.Add(e.write("b", 13*time.Second, 13*time.Second))
		},
		"missed DELETED": func(e *elector) {
			e.uid = "u2"
			_ = e.j.at(13 * time.Second).store.Add(e.write("b", 13*time.Second, 13*time.Second))
		},
		"relist": func(e *elector) {
			e.j.closeWatch()
			e.uid = "u2"
			_ = e.j.at(20*time.Second).store.Replace([]any{e.write("b", 13*time.Second, 13*time.Second)}, "")
		},
	}
	for name, live := range map[string]bool{"DELETED then ADDED": true, "missed DELETED": false, "relist": false} {
		t.Run(name, func(t *testing.T) {
			e := startElection(t, testDeletions, 10*time.Second)
			d := watchDeletions(e)
			recreate[name](e)
			recreated(t, e, d, live)
		})
	}

	e := startElection(t, testDeletions, 10*time.Second)
	d := watchDeletions(e)
	e.live("b", 12*time.Second, 12*time.Second)
	if got := tombstones(d); len(got) != 0 || e.j.lease(t).ObservedHolderChanges != 1 || deletionsCounted(d, "ns", lock.ClassLeaderElection) != 0 {
		t.Fatalf("a holder change left %d tombstones, %d holder changes", len(got), e.j.lease(t).ObservedHolderChanges)
	}
}

// A relist that no longer lists a lock, and a deletion whose event was lost
// (DeletedFinalStateUnknown), leave tombstones that were not seen live.
func TestDeletionNoticedLate(t *testing.T) {
	e := startElection(t, testDeletions, 10*time.Second)
	d := watchDeletions(e)
	e.j.closeWatch()
	_ = e.j.at(20*time.Second).store.Replace(nil, "")
	if ts := only(t, d); ts.Live || !ts.Held || ts.DeletedAt != sec(20*time.Second) || ts.History.Tenures[0].Ended != lock.Deleted {
		t.Fatalf("relisted deletion's tombstone %+v, want not live, held (its lease ran to 25 s), ended deleted", ts)
	}

	e = startElection(t, testDeletions, 10*time.Second)
	d = watchDeletions(e)
	_ = e.j.at(12 * time.Second).store.Delete(cache.DeletedFinalStateUnknown{Key: "ns/l", Obj: e.write("a", 10*time.Second, 2*time.Second)})
	if ts := only(t, d); ts.Live {
		t.Fatal("a deletion known only from a tombstone object was seen live")
	}
}

// At most MaxTombstones are kept, the newest; each for the retention only. Classes that keep
// no history (node heartbeats by default) and a retention of 0 keep none, but every
// deletion is counted.
func TestTombstonesBoundedAndExpire(t *testing.T) {
	now := t0
	d := newDeletions(testDeletions, nil, func() time.Time { return now }, newMetrics(prometheus.NewRegistry()))
	for i := range MaxTombstones + 10 {
		r := rawLease(fmt.Sprint("u", i), "1", "a", now)
		r.Name = fmt.Sprint("l", i)
		d.gone(lock.Project(r), now.UnixMicro(), true)
	}
	got := tombstones(d)
	if len(got) != MaxTombstones || got[0].Lock.Name() != "l10" || got[len(got)-1].Lock.Name() != fmt.Sprint("l", MaxTombstones+9) {
		t.Fatalf("%d tombstones from %s to %s, want the newest %d", len(got), got[0].Lock.Name(), got[len(got)-1].Lock.Name(), MaxTombstones)
	}
	now = now.Add(testDeletions.Deleted)
	if n := len(tombstones(d)); n != MaxTombstones {
		t.Fatalf("%d tombstones at exactly the retention, want all %d", n, MaxTombstones)
	}
	now = now.Add(time.Second)
	if n := len(tombstones(d)); n != 0 {
		t.Fatalf("%d tombstones past the retention", n)
	}
	node := rawLease("n1", "1", "node-1", now)
	node.Namespace = "kube-node-lease"
	d.gone(lock.Project(node), now.UnixMicro(), true)
	if n := len(tombstones(d)); n != 0 || deletionsCounted(d, "kube-node-lease", lock.ClassNodeHeartbeat) != 1 {
		t.Fatalf("a node Lease's deletion left %d tombstones, counted %v; want none, 1", n, deletionsCounted(d, "kube-node-lease", lock.ClassNodeHeartbeat))
	}
	off := testDeletions
	off.Deleted = 0
	d = newDeletions(off, nil, func() time.Time { return now }, newMetrics(prometheus.NewRegistry()))
	d.gone(lock.Project(rawLease("u1", "1", "a", now)), now.UnixMicro(), true)
	if n := len(tombstones(d)); n != 0 || deletionsCounted(d, "ns", lock.ClassLeaderElection) != 1 {
		t.Fatalf("retention 0 kept %d tombstones, counted %v", n, deletionsCounted(d, "ns", lock.ClassLeaderElection))
	}
}

// A namespace and class's series starts at 0 when its first lock is seen, so that rate()
// counts the first deletion. The namespace label takes at most maxDeletionNamespaces values;
// deletions in further namespaces count under otherNamespace.
func TestDeletionCounterBoundsNamespaces(t *testing.T) {
	reg := prometheus.NewRegistry()
	d := newDeletions(testDeletions, nil, time.Now, newMetrics(reg))
	d.firstSight(lock.Project(rawLease("u", "1", "a", t0)))
	if n := testutil.CollectAndCount(d.counter.vec); n != 1 || deletionsCounted(d, "ns", lock.ClassLeaderElection) != 0 {
		t.Fatalf("after the first sight of a lock: %d series, want ns's at 0", n)
	}
	for i := range maxDeletionNamespaces + 3 {
		r := rawLease("u", "1", "a", t0)
		r.Namespace = fmt.Sprint("ns-", i)
		d.gone(lock.Project(r), t0.UnixMicro(), true)
		d.gone(lock.Project(r), t0.UnixMicro(), true)
	}
	if n := testutil.CollectAndCount(d.counter.vec); n != maxDeletionNamespaces+1 { // ns and 499 of ns-*
		t.Fatalf("%d series, want %d namespaces and %s", n, maxDeletionNamespaces, otherNamespace)
	}
	if got := deletionsCounted(d, otherNamespace, lock.ClassLeaderElection); got != 8 { // ns-499 to ns-502, twice
		t.Fatalf("%s counted %v, want 8", otherNamespace, got)
	}
	if got := deletionsCounted(d, "ns-0", lock.ClassLeaderElection); got != 2 {
		t.Fatalf("ns-0 counted %v, want 2", got)
	}
}

// TestTombstonesHeap reports the live heap of MaxTombstones tombstones of leader-election
// locks with the default history full of distinct holders (the worst case), and holds it to
// what docs/status-page.md says: under 1.5 MB in all.
func TestTombstonesHeap(t *testing.T) {
	opts := lock.DefaultHistory
	before := liveHeap()
	now := time.Now()
	clock := now
	m := newMetrics(prometheus.NewRegistry())
	d := newDeletions(opts, nil, func() time.Time { return clock }, m)
	s := newStore(leaseSource{}.decode, lock.Observation(opts).Records(), nil, func() time.Time { return clock }, m)
	s.superseded = d.superseded
	for i := range MaxTombstones {
		_ = s.Add(electionLease(i, identity(i, 0), 0, now, now))
	}
	s.liveFrom.Store(now.UnixMicro())
	for step := 1; step <= opts.Tenures+opts.Renewals+1; step++ {
		clock = now.Add(time.Duration(step) * 2 * time.Second)
		for i := range MaxTombstones {
			_ = s.Update(electionLease(i, identity(i, min(step, opts.Tenures)), step, clock, clock))
		}
	}
	_ = s.Replace(nil, "") // all deleted while the watch was down
	if n := len(tombstones(d)); n != MaxTombstones {
		t.Fatalf("%d tombstones, want %d", n, MaxTombstones)
	}
	total := liveHeap() - before
	t.Logf("%d tombstones with full default histories: %d B live heap, %d B each", MaxTombstones, total, total/MaxTombstones)
	if total > 1536<<10 {
		t.Errorf("tombstones take %d B (%d B each), over the documented 1.5 MB", total, total/MaxTombstones)
	}
	runtime.KeepAlive(s)
	runtime.KeepAlive(d)
}
