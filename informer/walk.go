package informer

import (
	"slices"
	"sync"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// Ordered is a View that keeps its locks in the exposition's orders, so a scrape walks them
// in order instead of sorting them (the Cache; see ordering).
type Ordered interface {
	View
	// InOrder calls fn with consecutive batches of the cached locks in order o, across every
	// scope. Each batch is copied under its store's lock, so the cache keeps taking events
	// during a walk, and a walk holds only a few batches whatever the number of locks. A lock
	// added or removed meanwhile may or may not be seen, as if it had come or gone just after
	// or before the walk. fn returns false to end the walk early. fn must not modify or
	// retain the batch or the records' fields.
	InOrder(o lock.Order, fn func(batch []*lock.Lease) bool)
}

var _ Ordered = (*Cache)(nil)

// Walk calls fn with view's locks in order o: through Ordered's InOrder when the view keeps
// the order (the Cache), else all at once, sorted here (views built by hand, in tests).
func Walk(view View, o lock.Order, fn func(batch []*lock.Lease) bool) {
	if ov, ok := view.(Ordered); ok {
		ov.InOrder(o, fn)
		return
	}
	var all []*lock.Lease
	view.Range(func(l *lock.Lease) { all = append(all, l) })
	slices.SortFunc(all, o.Compare)
	if len(all) > 0 {
		_ = fn(all)
	}
}

// walkBatch is how many locks a batch holds: copied under the store's read lock in about
// 10 µs, and 8 KB of pointers.
const walkBatch = 1024

// batches are walks' buffers, reused from scrape to scrape.
var batches = sync.Pool{New: func() any { b := make([]*lock.Lease, 0, walkBatch); return &b }}

// cursor walks one store in order, a batch at a time.
type cursor struct {
	s    *store[*lock.Lease]
	buf  *[]*lock.Lease
	pos  int
	more bool // the last batch was full: the store may have more after it
}

// next returns the cursor's current lock, fetching the next batch when the last is used up;
// nil at the end of the store.
func (c *cursor) next(o lock.Order) *lock.Lease {
	b := *c.buf
	if c.pos < len(b) {
		return b[c.pos]
	}
	if !c.more {
		return nil
	}
	var last *lock.Lease
	if len(b) > 0 {
		last = b[len(b)-1]
	}
	b = c.s.inOrder(o, last, last != nil, b[:0])
	*c.buf, c.pos, c.more = b, 0, len(b) == cap(b)
	if len(b) == 0 {
		return nil
	}
	return b[0]
}

// walkStores walks stores in order o, merging them: each is sorted, and a few (one per lock
// kind and namespace scope) are merged by picking the least head each time.
func walkStores(stores []*store[*lock.Lease], o lock.Order, fn func([]*lock.Lease) bool) {
	if len(stores) == 1 { // the common case: every lock in one scope, nothing to merge
		walkStore(stores[0], o, fn)
		return
	}
	cursors := make([]cursor, len(stores))
	for i, s := range stores {
		cursors[i] = cursor{s: s, buf: batches.Get().(*[]*lock.Lease), more: true}
		*cursors[i].buf = (*cursors[i].buf)[:0]
	}
	out := batches.Get().(*[]*lock.Lease)
	defer func() {
		for _, c := range cursors {
			clear((*c.buf)[:cap(*c.buf)]) // drop the records, so the pool keeps none alive
			batches.Put(c.buf)
		}
		clear((*out)[:cap(*out)])
		batches.Put(out)
	}()
	batch := (*out)[:0]
	for {
		var least *lock.Lease
		at := -1
		for i := range cursors {
			if l := cursors[i].next(o); l != nil && (least == nil || o.Compare(l, least) < 0) {
				least, at = l, i
			}
		}
		if least == nil {
			break
		}
		cursors[at].pos++
		batch = append(batch, least)
		if len(batch) == cap(batch) {
			if !fn(batch) {
				return
			}
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		_ = fn(batch)
	}
}

// walkStore walks one store in order o, handing fn each batch as it is copied.
func walkStore(s *store[*lock.Lease], o lock.Order, fn func([]*lock.Lease) bool) {
	buf := batches.Get().(*[]*lock.Lease)
	defer func() {
		clear((*buf)[:cap(*buf)])
		batches.Put(buf)
	}()
	var last *lock.Lease
	for {
		b := s.inOrder(o, last, last != nil, (*buf)[:0])
		*buf = b
		if len(b) > 0 {
			if !fn(b) {
				return
			}
			last = b[len(b)-1]
		}
		if len(b) < cap(b) {
			return
		}
	}
}
