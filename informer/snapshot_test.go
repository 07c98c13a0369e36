package informer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// orderedScope is a test scope of Leases: its store keeps the exposition orders.
func orderedScope() *scope[*lock.Lease] {
	s := newTestScope()
	if len(s.orders) != int(lock.NumOrders) {
		panic("a Lease store keeps no orders")
	}
	return s
}

// walked returns what a walk of a snapshot of stores in order o yields, every node heartbeat
// included, batch boundaries ignored.
func walked(stores []*store[*lock.Lease], o lock.Order) []*lock.Lease {
	snap := takeSnapshot(stores, every)
	defer snap.Release()
	var got []*lock.Lease
	snap.InOrder(o, every, func(b []*lock.Lease) bool { got = append(got, b...); return true })
	return got
}

func every(*lock.Lease) bool { return true }

// sortedRecords is what the orders must equal: every record, sorted now.
func sortedRecords(stores []*store[*lock.Lease], o lock.Order) []*lock.Lease {
	var all []*lock.Lease
	for _, s := range stores {
		all = s.list(all)
	}
	slices.SortFunc(all, o.Compare)
	return all
}

// The orders the stores keep through adds, renewals, holder changes, deletes and relists are
// always what sorting every record would give, for both orders and merged across stores;
// a snapshot's walks cross batch boundaries (more locks than a batch holds) without losing or
// repeating one.
func TestSnapshotKeepsTheExpositionOrders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Two stores, as two namespace scopes are: each has its own namespaces, so no lock is in
	// both, and node heartbeats and leader elections mix in each.
	stores := []*store[*lock.Lease]{orderedScope().store, orderedScope().store}
	namespaces := map[*store[*lock.Lease]][]string{stores[0]: {"kube-node-lease", "team-a"}, stores[1]: {"kube-system", "team-b"}}
	holders := []string{"", "a", "b", "c"}
	names := map[*store[*lock.Lease]][]string{}
	renew := t0
	step := func() {
		s := stores[rng.IntN(len(stores))]
		renew = renew.Add(time.Millisecond)
		switch op := rng.IntN(10); {
		case op < 5 || len(names[s]) == 0: // a new lock
			ns := namespaces[s][rng.IntN(len(namespaces[s]))]
			name := fmt.Sprintf("lock-%04d", rng.IntN(3000))
			l := rawLease(ns+"/"+name, "1", holders[rng.IntN(len(holders))], renew)
			l.Namespace, l.Name = ns, name
			_ = s.Add(l)
			names[s] = append(names[s], ns+"/"+name)
		case op < 8: // a renewal, or a new holder
			key := names[s][rng.IntN(len(names[s]))]
			ns, name, _ := cutKey(key)
			l := rawLease(key, "2", holders[rng.IntN(len(holders))], renew)
			l.Namespace, l.Name = ns, name
			_ = s.Update(l)
		default: // a deletion
			i := rng.IntN(len(names[s]))
			ns, name, _ := cutKey(names[s][i])
			l := rawLease(names[s][i], "3", "", renew)
			l.Namespace, l.Name = ns, name
			_ = s.Delete(l)
			names[s] = slices.Delete(names[s], i, i+1)
		}
	}
	check := func(when string) {
		t.Helper()
		for o := range lock.NumOrders {
			got, want := walked(stores, o), sortedRecords(stores, o)
			if !slices.Equal(got, want) {
				d := firstDiff(got, want)
				t.Fatalf("%s: order %d walks %d locks, sorting gives %d; first difference at %d: %s/%s %v %q, want %s/%s %v %q", when, o, len(got), len(want), d,
					got[d].Namespace(), got[d].Name(), got[d].Class, got[d].Holder, want[d].Namespace(), want[d].Name(), want[d].Class, want[d].Holder)
			}
		}
	}
	for i := range 12000 {
		step()
		if i%1000 == 0 {
			check(fmt.Sprintf("after %d events", i+1))
		}
	}
	check("after 12000 events")
	if n := len(sortedRecords(stores, lock.BySeries)); n <= 2*walkBatch {
		t.Fatalf("harness: %d locks, want more than two batches' worth", n)
	}

	// A relist replaces a store's records: its orders are rebuilt.
	var items []any
	for _, key := range names[stores[0]][:len(names[stores[0]])/2] {
		ns, name, _ := cutKey(key)
		l := rawLease(key, "4", "z", renew)
		l.Namespace, l.Name = ns, name
		items = append(items, l)
	}
	_ = stores[0].Replace(items, "4")
	check("after a relist")
}

func cutKey(key string) (ns, name string, ok bool) {
	i := slices.Index([]byte(key), '/')
	return key[:i], key[i+1:], i >= 0
}

func firstDiff(a, b []*lock.Lease) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A snapshot is one read of the stores: what the cache takes after it (a lock added, one
// deleted, a holder change that moves a lock in lease_info's order) is in none of its walks,
// which give the records as they were, each once, however many walks and batches. Its node
// heartbeats are read at the first walk that asks for them: one added before that is in
// every walk, one added after in none. The next snapshot has it all.
func TestSnapshotIsOneRead(t *testing.T) {
	stores := []*store[*lock.Lease]{orderedScope().store, orderedScope().store}
	put := func(s *store[*lock.Lease], ns, name, holder, rv string) {
		l := rawLease(ns+"/"+name, rv, holder, t0)
		l.Namespace, l.Name = ns, name
		_ = s.Add(l)
	}
	del := func(s *store[*lock.Lease], ns, name string) {
		l := rawLease("", "3", "", t0)
		l.Namespace, l.Name = ns, name
		_ = s.Delete(l)
	}
	for i := range 3 * walkBatch {
		put(stores[i%2], []string{"team-a", "team-b"}[i%2], fmt.Sprintf("lock-%05d", i*2), "h", "1")
	}
	put(stores[0], "kube-node-lease", "node-1", "node-1", "1")
	put(stores[1], "kube-node-lease", "node-2", "node-2", "1")
	var want [lock.NumOrders][]*lock.Lease
	for o := range lock.NumOrders {
		want[o] = sortedRecords(stores, o)
	}
	snap := takeSnapshot(stores, every)
	defer snap.Release()

	// Before the first walk.
	put(stores[0], "team-a", "lock-00001", "h", "2") // added, ahead of every walk
	put(stores[1], "team-b", "lock-00003", "h", "2") // and in the other store
	put(stores[0], "team-a", "lock-00000", "z", "2") // a new holder: last in lease_info's order
	del(stores[1], "team-b", "lock-00010")           // a lock of the snapshot
	put(stores[1], "kube-node-lease", "node-3", "node-3", "2")
	node3, _ := stores[1].get("kube-node-lease/node-3")
	for o := range lock.NumOrders {
		want[o] = append(want[o], node3)
		slices.SortFunc(want[o], o.Compare)
	}
	for round := range 2 { // in the second, more events land in the middle of a walk
		for o := range lock.NumOrders {
			var got []*lock.Lease
			snap.InOrder(o, every, func(b []*lock.Lease) bool {
				if round == 1 && o == lock.ByInfo && len(got) == walkBatch {
					put(stores[1], "team-b", "lock-00005", "h", "2")
					put(stores[0], "kube-node-lease", "node-4", "node-4", "2")
					del(stores[0], "team-a", "lock-00000")
				}
				got = append(got, b...)
				return true
			})
			if !slices.Equal(got, want[o]) {
				d := firstDiff(got, want[o])
				t.Fatalf("round %d, order %d: the snapshot walks %d locks, want %d; first difference at %d", round, o, len(got), len(want[o]), d)
			}
		}
	}
	// Two locks added and one deleted before the first walk, and again in the middle of one.
	if got, want := len(walked(stores, lock.BySeries)), len(want[lock.BySeries])+2-1+2-1; got != want {
		t.Fatalf("a snapshot after the events walks %d locks, want %d", got, want)
	}
}

// Releasing a snapshot drops its records, so that the pooled snapshot keeps none alive.
func TestSnapshotReleaseDropsRecords(t *testing.T) {
	s := orderedScope()
	for i := range 10 {
		l := rawLease(fmt.Sprint(i), "1", "h", t0)
		l.Namespace, l.Name = []string{"ns", "kube-node-lease"}[i%2], fmt.Sprintf("lock-%d", i)
		_ = s.Add(l)
	}
	snap := takeSnapshot([]*store[*lock.Lease]{s.store}, every)
	snap.InOrder(lock.BySeries, every, func([]*lock.Lease) bool { return true })
	held := [][]*lock.Lease{snap.orders[lock.BySeries], snap.orders[lock.ByInfo], snap.nodes, snap.wanted}
	if len(held[0]) != 5 || len(held[2]) != 5 || len(held[3]) != 5 {
		t.Fatalf("harness: the snapshot holds %d ordered locks, %d node heartbeats and %d wanted; want 5 each", len(held[0]), len(held[2]), len(held[3]))
	}
	snap.Release()
	for i, h := range held {
		for _, l := range h[:cap(h)] {
			if l != nil {
				t.Fatalf("a released snapshot still holds %s/%s (slice %d)", l.Namespace(), l.Name(), i)
			}
		}
	}
}
