package informer

import (
	"slices"
	"sync"

	"github.com/lease-exporter/lease-exporter/lock"
)

// Ordered is a View that keeps its locks in the exposition's orders, so a scrape walks them
// in order instead of sorting them (the Cache; see ordering). The collectors read an Ordered
// view and nothing else: a test's hand-built view sorts in its own Snapshot
// (internal/testenv/fake's Snapshot and Scan).
type Ordered interface {
	View
	// Snapshot reads the cached locks once, for one scrape to write all its families from:
	// every lock but node heartbeats at once, and the node heartbeats nodes accepts (nil:
	// none; it is called under a store's read lock, so it must be quick) at the first walk
	// that asks for node heartbeats. A lock is one or the other for good (a node heartbeat
	// is a Lease in kube-node-lease), so each lock is read once: it is in every walk of the
	// snapshot or in none, always as the same record, whatever the cache takes meanwhile.
	// The caller releases it once the scrape is written.
	Snapshot(nodes func(*lock.Lease) bool) Snapshot
	// Scan calls fn with batches of every cached lock, in no order, each under its store's
	// read lock: fn must be quick and must not retain the batch.
	Scan(fn func(batch []*lock.Lease))
}

// Snapshot is one read of the cached locks (Ordered.Snapshot), walked once per family.
type Snapshot interface {
	// InOrder calls fn with consecutive batches of the snapshot's locks in order o: every
	// lock but node heartbeats, then the snapshot's node heartbeats that nodes accepts (nil:
	// none), sorted (the last class in both orders; a scrape wants the few that write a
	// series, usually none). fn returns false to end the walk early. fn must not modify or
	// retain the batch or the records' fields.
	InOrder(o lock.Order, nodes func(*lock.Lease) bool, fn func(batch []*lock.Lease) bool)
	// Release hands the snapshot's memory back for a later scrape; it must not be used after.
	Release()
}

var (
	_ Ordered  = (*Cache)(nil)
	_ Snapshot = (*snapshot)(nil)
)

func init() {
	// A walk gives the kept orders, then the node heartbeats: right only while they sort last.
	for _, c := range lock.Classes {
		if c != lock.ClassNodeHeartbeat && c.Rank() > lock.ClassNodeHeartbeat.Rank() {
			panic("informer: node heartbeats must be the last class in the exposition's orders")
		}
	}
}

// walkBatch is how many locks a batch holds: 8 KB of pointers, whose records lock.Warm
// fetches together.
const walkBatch = 1024

// batches are scans' buffers, reused from scrape to scrape.
var batches = sync.Pool{New: func() any { b := make([]*lock.Lease, 0, walkBatch); return &b }}

// snapshot is the Cache's Snapshot: pointers to the cached locks, copied from each store
// under its read lock: its two kept orders whole when the snapshot is taken, and the node
// heartbeats (which the orders leave out) that the scrape wants, found by a scan, at the
// first walk that asks for them. The scan is the slow part (3.0 ms at 90k node heartbeats),
// and that walk (lease_overdue_observed_renew_timestamp_seconds, by default) comes after the
// first bytes of the scrape have left. A record is never modified once cached (an event
// caches a new one in its place), so the pointers are the store as it was at the copy, and
// every family of the scrape reads the same records: the client_golang path's one pass over
// the view (Range), in the orders the writer needs. A lock lives in one store, and is a node
// heartbeat or not for good, so copying the stores one after another, and the node
// heartbeats later, reads each lock once.
//
// It is two pointers per lock but node heartbeats (1.6 MB at 100k election locks), plus one
// per node heartbeat kept (by default the overdue ones, usually none), and pooled: scrapes in
// quick succession, and simultaneous ones, reuse what earlier ones grew; what no scrape takes
// back goes with the pool at the second garbage collection.
type snapshot struct {
	orders [lock.NumOrders][]*lock.Lease // each store's kept order o, one store after another
	ends   []int                         // where each store's part of orders[o] ends (the same in every order)

	stores  []*store[*lock.Lease]  // whose node heartbeats are scanned for
	keep    func(*lock.Lease) bool // the node heartbeats the scrape wants
	scanned bool                   // nodes holds them
	nodes   []*lock.Lease          // the node heartbeats kept, in no order

	// The walks' buffers: the merge's position in each store, its batch, and the node
	// heartbeats a family writes.
	pos           []int
	batch, wanted []*lock.Lease
}

var snapshots = sync.Pool{New: func() any { return new(snapshot) }}

// takeSnapshot copies the kept orders of stores into a pooled snapshot, which scans them for
// the node heartbeats nodes accepts when a walk first asks for node heartbeats.
func takeSnapshot(stores []*store[*lock.Lease], nodes func(*lock.Lease) bool) *snapshot {
	s := snapshots.Get().(*snapshot)
	// The orders are sized first, so that their copies under the stores' locks allocate
	// nothing unless locks arrive in between (a first scrape, or one after the pool was
	// collected). The node heartbeats kept are few, or the same from scrape to scrape.
	n := 0
	for _, st := range stores {
		n += kept(st)
	}
	for o := range s.orders {
		s.orders[o] = slices.Grow(s.orders[o][:0], n)
	}
	s.ends = s.ends[:0]
	for _, st := range stores {
		s.copyOrders(st)
		s.ends = append(s.ends, len(s.orders[0]))
	}
	s.stores, s.keep, s.scanned = stores, nodes, false
	return s
}

// kept returns how many records st's orders keep.
func kept(st *store[*lock.Lease]) int {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return len(st.orders[0].items)
}

// copyOrders appends st's kept orders, copied whole under one hold of its read lock (at 100k
// locks, 1.6 MB in about 50 µs: BenchmarkSnapshot).
func (s *snapshot) copyOrders(st *store[*lock.Lease]) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	for o, kept := range st.orders {
		s.orders[o] = append(s.orders[o], kept.items...)
	}
}

// scanNodes keeps the node heartbeats of the snapshot's stores that s.keep accepts: each
// store scanned under its read lock, in batches, and only if it has any. This is the scan
// each family that wrote node heartbeats made before, now once per scrape.
func (s *snapshot) scanNodes() {
	s.scanned = true
	if s.keep == nil {
		return
	}
	buf := batches.Get().(*[]*lock.Lease)
	for _, st := range s.stores {
		s.scanStore(st, (*buf)[:0])
	}
	clear((*buf)[:cap(*buf)]) // drop the records, so the pool keeps none alive
	batches.Put(buf)
}

func (s *snapshot) scanStore(st *store[*lock.Lease], buf []*lock.Lease) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if len(st.records) == len(st.orders[0].items) {
		return // none left out of the orders
	}
	for _, r := range st.records {
		buf = append(buf, r)
		if len(buf) == cap(buf) {
			s.nodes = appendNodes(s.nodes, buf, s.keep)
			buf = buf[:0]
		}
	}
	s.nodes = appendNodes(s.nodes, buf, s.keep)
}

// appendNodes appends the node heartbeats of batch that nodes accepts.
func appendNodes(dst, batch []*lock.Lease, nodes func(*lock.Lease) bool) []*lock.Lease {
	lock.Warm(batch)
	for _, l := range batch {
		if !ordered(l) && nodes(l) {
			dst = append(dst, l)
		}
	}
	return dst
}

// InOrder implements Snapshot: the kept orders, merged across stores, then the node
// heartbeats nodes accepts, sorted.
func (s *snapshot) InOrder(o lock.Order, nodes func(*lock.Lease) bool, fn func([]*lock.Lease) bool) {
	if !s.walkOrdered(o, fn) || nodes == nil {
		return
	}
	if !s.scanned {
		s.scanNodes()
	}
	wanted := s.wanted[:0]
	for b := range slices.Chunk(s.nodes, walkBatch) {
		lock.Warm(b)
		for _, l := range b {
			if nodes(l) {
				wanted = append(wanted, l)
			}
		}
	}
	s.wanted = wanted
	slices.SortFunc(wanted, o.Compare)
	for b := range slices.Chunk(wanted, walkBatch) {
		if !fn(b) {
			return
		}
	}
}

// walkOrdered hands fn the kept orders o of the snapshot's stores, merged: each store's part
// is sorted, and the few parts (one per lock kind and namespace scope) are merged by picking
// the least head each time. It reports false when fn ended the walk.
func (s *snapshot) walkOrdered(o lock.Order, fn func([]*lock.Lease) bool) bool {
	all := s.orders[o]
	if len(s.ends) <= 1 { // the common case: every lock in one scope, nothing to merge
		for b := range slices.Chunk(all, walkBatch) {
			if !fn(b) {
				return false
			}
		}
		return true
	}
	s.pos = s.pos[:0]
	start := 0
	for _, end := range s.ends {
		s.pos = append(s.pos, start)
		start = end
	}
	batch := slices.Grow(s.batch[:0], walkBatch)
	for {
		var least *lock.Lease
		at := -1
		for i, p := range s.pos {
			if p < s.ends[i] && (least == nil || o.Compare(all[p], least) < 0) {
				least, at = all[p], i
			}
		}
		if least == nil {
			break
		}
		s.pos[at]++
		batch = append(batch, least)
		if len(batch) == walkBatch {
			if !fn(batch) {
				s.batch = batch
				return false
			}
			batch = batch[:0]
		}
	}
	s.batch = batch
	return len(batch) == 0 || fn(batch)
}

// Release implements Snapshot: it drops the snapshot's records, so that the pool keeps none
// alive, and pools its memory.
func (s *snapshot) Release() {
	for o := range s.orders {
		clear(s.orders[o])
		s.orders[o] = s.orders[o][:0]
	}
	clear(s.nodes)
	s.nodes = s.nodes[:0]
	s.stores, s.keep = nil, nil
	clear(s.batch[:cap(s.batch)])
	clear(s.wanted[:cap(s.wanted)]) // each family's node heartbeats; the last may be fewer
	snapshots.Put(s)
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
