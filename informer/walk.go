package informer

import (
	"slices"
	"sync"

	"github.com/lease-exporter/lease-exporter/lock"
)

// Ordered is a View that keeps its locks in the exposition's orders, so a scrape walks them
// in order instead of sorting them (the Cache; see ordering). The collectors read an Ordered
// view and nothing else: a test's hand-built view sorts in its own InOrder
// (internal/testenv/fake's InOrder and Scan).
type Ordered interface {
	View
	// InOrder calls fn with consecutive batches of the cached locks in order o, across every
	// scope: every lock but node heartbeats, from the kept orders, each batch copied under its
	// store's lock, so the cache keeps taking events during a walk; then the node heartbeats
	// nodes accepts (nil: none), found by a scan and sorted (the last class in both orders;
	// a scrape wants the few that write a series, usually none).
	// A lock added or removed meanwhile may or may not be seen, as if it had come or gone
	// just after or before the walk. fn returns false to end the walk early. fn must not
	// modify or retain the batch or the records' fields.
	InOrder(o lock.Order, nodes func(*lock.Lease) bool, fn func(batch []*lock.Lease) bool)
	// Scan calls fn with batches of every cached lock, in no order, each under its store's
	// read lock: fn must be quick and must not retain the batch.
	Scan(fn func(batch []*lock.Lease))
}

var _ Ordered = (*Cache)(nil)

func init() {
	// InOrder walks the kept orders, then the node heartbeats: right only while they sort last.
	for _, c := range lock.Classes {
		if c != lock.ClassNodeHeartbeat && c.Rank() > lock.ClassNodeHeartbeat.Rank() {
			panic("informer: node heartbeats must be the last class in the exposition's orders")
		}
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

// walkStores walks stores in order o: the kept orders, then the node heartbeats nodes
// accepts, found by a scan and sorted.
func walkStores(stores []*store[*lock.Lease], o lock.Order, nodes func(*lock.Lease) bool, fn func([]*lock.Lease) bool) {
	if !walkOrdered(stores, o, fn) || nodes == nil {
		return
	}
	var wanted []*lock.Lease
	scanStores(stores, func(batch []*lock.Lease) {
		lock.Warm(batch)
		for _, l := range batch {
			if !ordered(l) && nodes(l) {
				wanted = append(wanted, l)
			}
		}
	})
	slices.SortFunc(wanted, o.Compare)
	for len(wanted) > 0 {
		n := min(len(wanted), walkBatch)
		if !fn(wanted[:n]) {
			return
		}
		wanted = wanted[n:]
	}
}

// scanStores calls fn with batches of every record of stores, in no order, each under its
// store's read lock (a map cannot be iterated across unlocks); one batch of memory.
func scanStores(stores []*store[*lock.Lease], fn func([]*lock.Lease)) {
	buf := batches.Get().(*[]*lock.Lease)
	defer func() {
		clear((*buf)[:cap(*buf)])
		batches.Put(buf)
	}()
	for _, s := range stores {
		s.scan((*buf)[:0], fn)
	}
}

// walkOrdered walks the kept orders of stores in order o, merging them: each is sorted, and
// a few (one per lock kind and namespace scope) are merged by picking the least head each
// time. It reports false when fn ended the walk.
func walkOrdered(stores []*store[*lock.Lease], o lock.Order, fn func([]*lock.Lease) bool) bool {
	if len(stores) == 1 { // the common case: every lock in one scope, nothing to merge
		return walkStore(stores[0], o, fn)
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
				return false
			}
			batch = batch[:0]
		}
	}
	return len(batch) == 0 || fn(batch)
}

// walkStore walks one store's kept order o, handing fn each batch as it is copied; false when
// fn ended the walk.
func walkStore(s *store[*lock.Lease], o lock.Order, fn func([]*lock.Lease) bool) bool {
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
				return false
			}
			last = b[len(b)-1]
		}
		if len(b) < cap(b) {
			return true
		}
	}
}
