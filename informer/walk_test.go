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

// walked returns what a walk of stores in order o yields, batch boundaries ignored.
func walked(stores []*store[*lock.Lease], o lock.Order) []*lock.Lease {
	var got []*lock.Lease
	every := func(*lock.Lease) bool { return true }
	walkStores(stores, o, every, func(b []*lock.Lease) bool { got = append(got, b...); return true })
	return got
}

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
// walks cross batch boundaries (more locks than a batch holds) without losing or repeating
// one.
func TestWalkKeepsTheExpositionOrders(t *testing.T) {
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

// A walk copies a batch at a time under the store's lock: events go on between batches, and
// a lock added behind the walk's position is not seen, one ahead of it is, and none is seen
// twice.
func TestWalkGoesOnWhileEventsArrive(t *testing.T) {
	s := orderedScope()
	for i := range 3 * walkBatch {
		l := rawLease(fmt.Sprint(i), "1", "h", t0)
		l.Namespace, l.Name = "ns", fmt.Sprintf("lock-%05d", i*2)
		_ = s.Add(l)
	}
	var got []*lock.Lease
	added := false
	walkStore(s.store, lock.BySeries, func(b []*lock.Lease) bool {
		got = append(got, b...)
		if !added { // after the first batch: one lock behind the walk, one ahead
			for _, name := range []string{"lock-00001", "lock-05999"} {
				l := rawLease(name, "1", "h", t0)
				l.Namespace, l.Name = "ns", name
				_ = s.Add(l)
			}
			added = true
		}
		return true
	})
	names := map[string]int{}
	for _, l := range got {
		names[l.Name()]++
	}
	if names["lock-00001"] != 0 || names["lock-05999"] != 1 || len(got) != 3*walkBatch+1 {
		t.Fatalf("walked %d locks (behind: %d, ahead: %d), want %d: all but the one added behind", len(got), names["lock-00001"], names["lock-05999"], 3*walkBatch+1)
	}
	if !slices.IsSortedFunc(got, lock.BySeries.Compare) {
		t.Fatal("the walk is out of order")
	}
}
