package informer

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/tools/cache"
)

// store is the cache of one watched scope, and the queue its reflector writes to: each
// event is projected, observed and cached in the reflector's own goroutine.
//
// Why not a SharedIndexInformer: it queues every event in a FIFO for a second goroutine,
// which hands it to two more per event handler. At 1,000 renewals/s those hand-offs cost
// more CPU than the work, and the FIFO and handler buffers keep what the initial list grew
// them to. The reflector (list, watch, resume, relist, backoff) is client-go's, unchanged.
type store struct {
	now     func() time.Time
	keep    func(namespace, name string) bool // nil keeps every Lease
	metrics *metrics
	health  *health
	// catchingUp is the scope's: set while a streaming list sends its initial events.
	catchingUp *atomic.Bool

	// leases is written only by the reflector's goroutine, under mu; scrapes read it.
	mu     sync.RWMutex
	leases map[string]*Lease

	synced    chan struct{} // closed by the first Replace: the initial list is cached
	syncOnce  sync.Once
	closed    chan struct{}
	closeOnce sync.Once
}

var (
	_ cache.Queue                  = (*store)(nil)
	_ cache.ReflectorBookmarkStore = (*store)(nil)
	_ cache.TransformingStore      = (*store)(nil)
)

func newStore(now func() time.Time, keep func(namespace, name string) bool, m *metrics, h *health) *store {
	return &store{now: now, keep: keep, metrics: m, health: h, leases: map[string]*Lease{},
		synced: make(chan struct{}), closed: make(chan struct{})}
}

// record projects a watch event's object; nil for Leases of other shards and foreign types.
func (s *store) record(obj any) *Lease {
	var l *Lease
	switch o := obj.(type) {
	case *coordinationv1.Lease:
		l = Project(o)
	case *Lease: // from a streaming list, projected by Transformer
		l = o
	default:
		return nil
	}
	if s.keep != nil && !s.keep(l.Namespace(), l.Name()) {
		return nil
	}
	return l
}

// Add caches a Lease from an ADDED event.
func (s *store) Add(obj any) error {
	s.upsert(obj, s.event(s.metrics.added))
	return nil
}

// Update caches a Lease from a MODIFIED event.
func (s *store) Update(obj any) error {
	s.upsert(obj, s.event(s.metrics.modified))
	return nil
}

func (s *store) upsert(obj any, now time.Time) {
	l := s.record(obj)
	if l == nil {
		return
	}
	prev := s.leases[l.key] // the only writer may read without the lock
	if rec := observe(prev, l, now.UnixMicro()); rec != prev {
		s.mu.Lock()
		s.leases[l.key] = rec
		s.mu.Unlock()
	}
}

// Delete drops a Lease on a DELETED event.
func (s *store) Delete(obj any) error {
	s.event(s.metrics.deleted)
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if l := s.record(obj); l != nil {
		s.mu.Lock()
		delete(s.leases, l.key)
		s.mu.Unlock()
	}
	return nil
}

// Bookmark counts a BOOKMARK event; the reflector keeps its resource version.
func (s *store) Bookmark(string) error {
	s.event(s.metrics.bookmark)
	return nil
}

// Replace swaps in the result of a list (or of a streaming list's initial events),
// carrying observed state over from the cached records.
func (s *store) Replace(items []any, _ string) error {
	now := s.now().UnixMicro()
	next := make(map[string]*Lease, len(items))
	for _, obj := range items {
		if l := s.record(obj); l != nil {
			next[l.key] = observe(s.leases[l.key], l, now)
		}
	}
	s.mu.Lock()
	s.leases = next
	s.mu.Unlock()
	s.syncOnce.Do(func() { close(s.synced) })
	// After a streaming list the watch stays open and this is its end of initial events;
	// a plain list comes before its watch opens, which then marks the view fresh.
	if s.catchingUp != nil && s.catchingUp.Swap(false) {
		s.health.caughtUp()
	}
	return nil
}

// Resync does nothing: the exporter has no resync period.
func (s *store) Resync() error { return nil }

// Transformer projects the initial events of a streaming list, which the reflector collects
// in a temporary store before Replace: records instead of full Leases keep that peak small.
func (s *store) Transformer() cache.TransformFunc {
	return func(obj any) (any, error) {
		if l, ok := obj.(*coordinationv1.Lease); ok {
			return Project(l), nil
		}
		return obj, nil
	}
}

// Pop blocks until the store is closed: events are processed as they are added, so the
// controller's processing loop has nothing to pop.
func (s *store) Pop(cache.PopProcessFunc) (any, error) {
	<-s.closed
	return nil, cache.ErrFIFOClosed
}

// Close ends Pop; the controller calls it when its context is done.
func (s *store) Close() { s.closeOnce.Do(func() { close(s.closed) }) }

// HasSynced reports whether the initial list is cached.
func (s *store) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// HasSyncedChecker returns the same as a DoneChecker.
func (s *store) HasSyncedChecker() cache.DoneChecker { return syncedChecker{s.synced} }

type syncedChecker struct{ done chan struct{} }

func (c syncedChecker) Name() string          { return "lease cache" }
func (c syncedChecker) Done() <-chan struct{} { return c.done }

// list returns the cached records; scrapes range over the copy without holding the lock.
func (s *store) list(buf []*Lease) []*Lease {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, l := range s.leases {
		buf = append(buf, l)
	}
	return buf
}

// event counts one watch event and returns the time it was received.
func (s *store) event(c prometheus.Counter) time.Time {
	now := s.now()
	c.Inc()
	s.metrics.lastEventEpoch.Set(float64(now.UnixMilli()) / 1e3)
	return now
}
