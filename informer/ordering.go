package informer

import (
	"slices"

	"github.com/lease-exporter/lease-exporter/lock"
)

// ordering keeps a store's records sorted by one order as they come, go or change place (a
// lock's holder moves it in lease_info's order); a renewal replaces its record where it is.
// A scrape then copies the records in order (Cache.Snapshot) instead of sorting them: at 100k
// locks the two sorts were a quarter of a scrape's CPU, repeated on every scrape although a
// renewal never changes the order. The store's lock guards it.
//
// It keeps only the records keep accepts: for locks, every class but node heartbeats. Those
// are nine in ten of a large cluster's Leases, summed up by default (a series only for an
// overdue one), and two orderings of them would cost 16 B each, past the cache's 300 B per
// Lease budget (docs/benchmarks.md); a snapshot finds them by a scan, and a family sorts the
// few it writes (snapshot.go).
type ordering[R any] struct {
	cmp   func(a, b R) int
	keep  func(R) bool
	items []R
}

// lockOrderings returns the orderings a store of locks keeps, indexed by lock.Order, which
// scrapes walk (the lock sources' orderings). A store of other records (LeaseCandidates)
// keeps none.
func lockOrderings() []*ordering[*lock.Lease] {
	out := make([]*ordering[*lock.Lease], lock.NumOrders)
	for o := range lock.NumOrders {
		out[o] = &ordering[*lock.Lease]{cmp: o.Compare, keep: ordered}
	}
	return out
}

// ordered reports whether a lock is kept in the orderings: every lock but a node heartbeat.
func ordered(l *lock.Lease) bool { return l.Class != lock.ClassNodeHeartbeat }

// put places next, which replaces prev (none when !hasPrev): in prev's place when they
// compare equal, the commonest case (a renewal); else prev is taken out and next inserted.
// Each is a binary search; an insertion or removal also moves the items after it (at 100k
// locks, 800 KB at most: docs/benchmarks.md).
func (o *ordering[R]) put(prev, next R, hasPrev bool) {
	hasPrev = hasPrev && o.keep(prev)
	if !o.keep(next) {
		if hasPrev {
			o.remove(prev)
		}
		return
	}
	if hasPrev {
		i, found := slices.BinarySearchFunc(o.items, prev, o.cmp)
		if found && o.cmp(prev, next) == 0 {
			o.items[i] = next
			return
		}
		if found {
			o.items = slices.Delete(o.items, i, i+1)
		}
	}
	j, _ := slices.BinarySearchFunc(o.items, next, o.cmp)
	o.items = slices.Insert(o.items, j, next)
}

// remove takes r out.
func (o *ordering[R]) remove(r R) {
	if !o.keep(r) {
		return
	}
	if i, found := slices.BinarySearchFunc(o.items, r, o.cmp); found {
		o.items = slices.Delete(o.items, i, i+1)
	}
}

// sorted returns records sorted, the items after a list, which replaces everything. The
// slice is sized to fit, so a cache that shrank gives its memory back.
func (o *ordering[R]) sorted(records map[string]R) []R {
	n := 0 // counted first, so the slice is allocated once, to fit
	for _, r := range records {
		if o.keep(r) {
			n++
		}
	}
	items := make([]R, 0, n)
	for _, r := range records {
		if o.keep(r) {
			items = append(items, r)
		}
	}
	slices.SortFunc(items, o.cmp)
	return items
}
