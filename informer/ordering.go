package informer

import (
	"slices"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// ordering keeps a store's records sorted by one order as they come, go or change place (a
// lock's holder moves it in lease_info's order); a renewal replaces its record where it is.
// A scrape then walks the records in order (Cache.InOrder) instead of sorting them: at 100k
// locks the two sorts were a quarter of a scrape's CPU, repeated on every scrape although a
// renewal never changes the order. The store's lock guards it.
type ordering[R any] struct {
	cmp   func(a, b R) int
	items []R
}

// lockOrderings returns a lock store's orderings, indexed by lock.Order.
func lockOrderings() []*ordering[*lock.Lease] {
	out := make([]*ordering[*lock.Lease], lock.NumOrders)
	for o := range lock.NumOrders {
		out[o] = &ordering[*lock.Lease]{cmp: o.Compare}
	}
	return out
}

// put places next, which replaces prev (none when !hasPrev): in prev's place when they
// compare equal, the commonest case (a renewal); else prev is taken out and next inserted.
// Each is a binary search; an insertion or removal also moves the items after it (at 100k
// locks, 800 KB at most: docs/benchmarks.md).
func (o *ordering[R]) put(prev, next R, hasPrev bool) {
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
	if i, found := slices.BinarySearchFunc(o.items, r, o.cmp); found {
		o.items = slices.Delete(o.items, i, i+1)
	}
}

// sorted returns records sorted, the items after a list, which replaces everything. The
// slice is sized to fit, so a cache that shrank gives its memory back.
func (o *ordering[R]) sorted(records map[string]R) []R {
	items := make([]R, 0, len(records))
	for _, r := range records {
		items = append(items, r)
	}
	slices.SortFunc(items, o.cmp)
	return items
}

// after appends to buf, up to its capacity, the items that come after last (from the first
// when !hasLast), and returns it.
func (o *ordering[R]) after(last R, hasLast bool, buf []R) []R {
	i := 0
	if hasLast {
		var found bool
		if i, found = slices.BinarySearchFunc(o.items, last, o.cmp); found {
			i++
		}
	}
	n := min(cap(buf)-len(buf), len(o.items)-i)
	return append(buf, o.items[i:i+n]...)
}
