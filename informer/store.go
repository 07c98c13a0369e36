package informer

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/lease-exporter/lease-exporter/lock"
)

// store is the cache of one scope, and the queue its reflector writes to: each event is
// decoded, observed and cached in the reflector's own goroutine. It knows nothing of the
// kind it caches beyond the source's decoder and the record type's observe function.
//
// Why not a SharedIndexInformer: it queues every event in a FIFO for a second goroutine,
// which hands it to two more per event handler. At 1,000 renewals/s those hand-offs cost
// more CPU than the work, and the FIFO and handler buffers keep what the initial list grew
// them to. The reflector (list, watch, resume, relist, backoff) is client-go's, unchanged.
type store[R record[R]] struct {
	decode  func(obj any) (R, bool)                    // the source's
	observe func(prev, next R, now int64, live bool) R // the record type's: observe for locks
	keep    keepFunc                                   // nil keeps every record
	now     func() time.Time
	metrics *metrics
	// liveFrom is when (Unix µs) events start being seen as they happen: a second after the
	// scope's watch opened, past the replay of what changed while it was closed; 0 while no
	// watch is open. The scope sets it; see live.
	liveFrom atomic.Int64
	// awaitingEvent is set while the scope's open watch has delivered nothing; the first event
	// or bookmark clears it and calls firstEvent (the scope tells health the watch works).
	awaitingEvent atomic.Bool
	firstEvent    func()
	// superseded is told of every cached record that a new one replaces or that is dropped
	// because its object went (next is then the zero R), at at (Unix µs), live as the event
	// was: the record type tells from it an incarnation that went (deletions.superseded).
	// Records dropped for no longer being of interest (forget) are not reported. nil for
	// record types that keep no deletions.
	superseded func(prev, next R, at int64, live bool)

	// records is written only by the reflector's goroutine, under mu; scrapes read it.
	mu      sync.RWMutex
	records map[string]R
	// orders keep records sorted in each exposition order (lock stores only; see ordering),
	// indexed by lock.Order; under mu like records.
	orders []*ordering[R]

	synced    chan struct{} // closed by the first Replace: the initial list is cached
	syncOnce  sync.Once
	closed    chan struct{}
	closeOnce sync.Once
}

var (
	_ cache.Queue                  = (*store[*lock.Lease])(nil)
	_ cache.ReflectorBookmarkStore = (*store[*lock.Lease])(nil)
	_ cache.TransformingStore      = (*store[*lock.Lease])(nil)
)

func newStore[R record[R]](decode func(any) (R, bool), observe func(prev, next R, now int64, live bool) R, keep keepFunc,
	now func() time.Time, m *metrics) *store[R] {
	return &store[R]{decode: decode, observe: observe, keep: keep, now: now, metrics: m, records: map[string]R{},
		synced: make(chan struct{}), closed: make(chan struct{})}
}

// record decodes a watch event's object; false for records of other shards and for objects
// the source does not decode.
func (s *store[R]) record(obj any) (R, bool) {
	r, ok := obj.(R) // from a streaming list, decoded by Transformer
	if !ok {
		r, ok = s.decode(obj)
	}
	if !ok || s.keep != nil && !s.keep(r.ShardKey()) {
		var none R
		return none, false
	}
	return r, true
}

// Add caches a record from an ADDED event.
func (s *store[R]) Add(obj any) error {
	s.upsert(obj, s.event(s.metrics.added))
	return nil
}

// Update caches a record from a MODIFIED event.
func (s *store[R]) Update(obj any) error {
	s.upsert(obj, s.event(s.metrics.modified))
	return nil
}

func (s *store[R]) upsert(obj any, now time.Time) {
	r, ok := s.record(obj)
	if !ok {
		s.forget(obj)
		return
	}
	key := r.StoreKey()
	prev := s.records[key] // the only writer may read without the lock
	at := now.UnixMicro()
	var none R
	if s.superseded != nil && prev != none {
		// Not live even on the watch: a new UID with no DELETED event before it means the
		// deletion was missed, at some moment before now.
		s.superseded(prev, r, at, false)
	}
	if rec := s.observe(prev, r, at, s.live(at)); rec != prev {
		s.mu.Lock()
		s.records[key] = rec
		for _, o := range s.orders {
			o.put(prev, rec, prev != none)
		}
		s.mu.Unlock()
	}
}

// forget drops the record of an object that is no longer of interest: a ConfigMap whose
// leader annotation was removed is no longer a lock, but its events keep coming.
func (s *store[R]) forget(obj any) {
	m, ok := obj.(metav1.Object)
	if !ok || len(s.records) == 0 {
		return
	}
	key := m.GetNamespace() + "/" + m.GetName()
	if r, cached := s.records[key]; cached { // the only writer may read without the lock
		s.mu.Lock()
		delete(s.records, key)
		for _, o := range s.orders {
			o.remove(r)
		}
		s.mu.Unlock()
	}
}

// replayGrace is how long after a watch opens its events count as replay: a watch resumed
// after a disconnect first delivers what changed meanwhile, at once (watchconn.go reads it
// unbatched for the same second), and those changes did not happen when they arrive.
const replayGrace = requestGrace

// live reports whether an event arriving at at (Unix µs) is seen as it happens.
func (s *store[R]) live(at int64) bool {
	from := s.liveFrom.Load()
	return from != 0 && at >= from
}

// Delete drops a record on a DELETED event, or on the tombstone of a deletion whose event
// was missed (cache.DeletedFinalStateUnknown), which is not live.
func (s *store[R]) Delete(obj any) error {
	now := s.event(s.metrics.deleted).UnixMicro()
	live := s.live(now)
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, live = t.Obj, false
	}
	r, ok := s.record(obj)
	if !ok {
		return nil
	}
	key := r.StoreKey()
	prev, cached := s.records[key] // the only writer may read without the lock
	if !cached {
		return nil
	}
	s.mu.Lock()
	delete(s.records, key)
	for _, o := range s.orders {
		o.remove(prev)
	}
	s.mu.Unlock()
	if s.superseded != nil {
		var none R
		s.superseded(prev, none, now, live) // the cached record knows more than the event's
	}
	return nil
}

// Bookmark counts a BOOKMARK event; the reflector keeps its resource version.
func (s *store[R]) Bookmark(string) error {
	s.event(s.metrics.bookmark)
	return nil
}

// Replace swaps in the result of a list (or of a streaming list's initial events),
// carrying observed state over from the cached records.
func (s *store[R]) Replace(items []any, _ string) error {
	now := s.now().UnixMicro()
	// Sized by what is kept, not by the items: of 10k ConfigMaps, 100 may be locks, and a map
	// sized for all of them would keep that size for good.
	kept := make([]R, 0, len(items))
	for _, obj := range items {
		if r, ok := s.record(obj); ok {
			kept = append(kept, r)
		}
	}
	next := make(map[string]R, len(kept))
	for _, r := range kept {
		key := r.StoreKey()
		next[key] = s.observe(s.records[key], r, now, false) // a list shows what changed, not when
	}
	// A sort per list (lists are rare, renewals are not), done before taking the lock so that
	// scrapes do not wait for it.
	sorted := make([][]R, len(s.orders))
	for i, o := range s.orders {
		sorted[i] = o.sorted(next)
	}
	s.mu.Lock()
	prev := s.records
	s.records = next
	for i, o := range s.orders {
		o.items = sorted[i]
	}
	s.mu.Unlock()
	if s.superseded != nil {
		// What the list no longer has, or has with a new UID, went while no watch was open.
		for key, r := range prev {
			s.superseded(r, next[key], now, false)
		}
	}
	s.syncOnce.Do(func() { close(s.synced) })
	return nil
}

// Resync does nothing: the exporter has no resync period.
func (s *store[R]) Resync() error { return nil }

// Transformer decodes the initial events of a streaming list, which the reflector collects
// in a temporary store before Replace: records instead of full objects keep that peak small.
func (s *store[R]) Transformer() cache.TransformFunc {
	return func(obj any) (any, error) {
		if r, ok := s.decode(obj); ok {
			return r, nil
		}
		// Not of interest (a ConfigMap without the leader annotation): hold only its key
		// until Replace drops it, not its labels, annotations and managed fields.
		if m, ok := obj.(metav1.Object); ok {
			return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
				Namespace: m.GetNamespace(), Name: m.GetName(), ResourceVersion: m.GetResourceVersion()}}, nil
		}
		return obj, nil
	}
}

// Pop blocks until the store is closed: events are processed as they are added, so the
// controller's processing loop has nothing to pop.
func (s *store[R]) Pop(cache.PopProcessFunc) (any, error) {
	<-s.closed
	return nil, cache.ErrFIFOClosed
}

// Close ends Pop; the controller calls it when its context is done.
func (s *store[R]) Close() { s.closeOnce.Do(func() { close(s.closed) }) }

// HasSynced reports whether the initial list is cached.
func (s *store[R]) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// HasSyncedChecker returns the same as a DoneChecker.
func (s *store[R]) HasSyncedChecker() cache.DoneChecker { return syncedChecker{s.synced} }

type syncedChecker struct{ done chan struct{} }

func (c syncedChecker) Name() string          { return "lease cache" }
func (c syncedChecker) Done() <-chan struct{} { return c.done }

// list returns the cached records; scrapes range over the copy without holding the lock.
func (s *store[R]) list(buf []R) []R {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, r := range s.records {
		buf = append(buf, r)
	}
	return buf
}

// event counts one watch event and returns the time it was received.
func (s *store[R]) event(c prometheus.Counter) time.Time {
	if s.awaitingEvent.Load() && s.awaitingEvent.CompareAndSwap(true, false) && s.firstEvent != nil {
		s.firstEvent()
	}
	now := s.now()
	c.Inc()
	s.metrics.lastEventEpoch.Set(float64(now.UnixMilli()) / 1e3)
	return now
}

// scan calls fn with batches of the cached records (buf's capacity each), under the read
// lock throughout.
func (s *store[R]) scan(buf []R, fn func([]R)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, r := range s.records {
		buf = append(buf, r)
		if len(buf) == cap(buf) {
			fn(buf)
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		fn(buf)
	}
}

// get returns the record cached under key.
func (s *store[R]) get(key string) (R, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.records[key]
	return r, ok
}
