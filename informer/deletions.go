package informer

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/lock"
)

// Deletions leave tombstones. A lock that disappears takes its series with it, and every
// alert on them goes quiet; what the exporter knew of it (who held it, its history) would go
// too. So the stores report every incarnation they stop caching because it went, and the
// Cache counts it (lease_exporter_lock_deletions_total) and, for the classes that keep a
// history, keeps its last record for a while, for the status page. Live locks pay nothing:
// only the deleted ones are kept, in one bounded list.

// MaxTombstones bounds the tombstones kept, however many locks go within the retention: a
// namespace of thousands of locks deleted at once keeps its newest MaxTombstones. Each holds
// its last record and history: about 1.2 KB at worst (TestTombstonesHeap).
const MaxTombstones = 1000

// MaxDeletedRetention bounds HistoryOptions.Deleted: tombstones are for reading after an
// incident, and the counter in Prometheus, not the exporter's memory, is the lasting record.
const MaxDeletedRetention = 24 * time.Hour

// DeletionView is what the status page may see of the locks deleted recently. It is
// separate from View because the collector has no use for it.
type DeletionView interface {
	// RangeDeleted calls fn for every tombstone kept, oldest deletion first. fn must not
	// modify or retain the tombstone's record.
	RangeDeleted(fn func(*lock.Tombstone))
}

// deletions counts the lock incarnations that went and keeps the tombstones. Every lock
// scope's reflector reports to it, concurrently.
type deletions struct {
	opts lock.HistoryOptions
	// observer, if set, is told of every incarnation that went (Observer.Gone).
	observer Observer
	now      func() time.Time
	counter  *deletionCounter

	mu    sync.Mutex
	tombs []*lock.Tombstone // oldest first, at most MaxTombstones
}

func newDeletions(opts lock.HistoryOptions, observer Observer, now func() time.Time, m *metrics) *deletions {
	counter := &deletionCounter{vec: m.lockDeletions, namespaces: map[string]struct{}{}, series: map[namespacedClass]prometheus.Counter{}}
	return &deletions{opts: opts, observer: observer, now: now, counter: counter}
}

// firstSight is told of every lock incarnation's first observation: its namespace and
// class's series starts at 0.
func (d *deletions) firstSight(l *lock.Lease) { d.counter.touch(l) }

// superseded is the lock stores' report (store.superseded): prev's incarnation went if
// nothing replaces it or its successor has another UID (a recreation, not a holder change).
func (d *deletions) superseded(prev, next *lock.Lease, at int64, live bool) {
	if next == nil || next.UID != prev.UID {
		d.gone(prev, at, live)
	}
}

// gone counts last, the cached record of an incarnation that went at at, and keeps its
// tombstone if its class keeps one.
func (d *deletions) gone(last *lock.Lease, at int64, live bool) {
	d.counter.inc(last.Namespace(), last.Class)
	if d.observer != nil {
		d.observer.Gone(last, at, live)
	}
	if d.opts.Deleted <= 0 || !d.keeps(last.Class) {
		return
	}
	t := lock.Bury(last, at, live)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.prune()
	if len(d.tombs) == MaxTombstones {
		copy(d.tombs, d.tombs[1:])
		d.tombs = d.tombs[:MaxTombstones-1]
	}
	d.tombs = append(d.tombs, t)
}

// keeps reports whether deleted locks of class c leave a tombstone: the classes that keep a
// history, so mass deletions of node Leases (a cluster scaling down) crowd out nothing.
func (d *deletions) keeps(c lock.Class) bool {
	return slices.Contains(d.opts.Classes, c)
}

// prune drops the tombstones older than the retention; d.mu is held.
func (d *deletions) prune() {
	oldest := d.now().Add(-d.opts.Deleted).UnixMicro()
	n := 0
	for n < len(d.tombs) && d.tombs[n].DeletedAt < oldest {
		n++
	}
	if n > 0 {
		d.tombs = append(d.tombs[:0], d.tombs[n:]...)
	}
}

// RangeDeleted implements DeletionView.
func (d *deletions) RangeDeleted(fn func(*lock.Tombstone)) {
	d.mu.Lock()
	d.prune()
	tombs := append([]*lock.Tombstone(nil), d.tombs...)
	d.mu.Unlock()
	for _, t := range tombs {
		fn(t)
	}
}

// maxDeletionNamespaces bounds the namespace label of lease_exporter_lock_deletions_total:
// a cluster that creates and deletes a namespace per CI run would otherwise add series for
// as long as the exporter runs. Locks in further namespaces count as otherNamespace.
const maxDeletionNamespaces = 500

// otherNamespace is no valid namespace name (it has an underscore), so it names no real one.
const otherNamespace = "_other"

// deletionCounter is lease_exporter_lock_deletions_total with its namespace label bounded.
// Each series starts at 0 when the first lock of its namespace and class is seen (touch), so
// that rate() and increase() count the first deletion too, which a series born at 1 would
// hide.
type deletionCounter struct {
	vec *prometheus.CounterVec

	mu         sync.Mutex
	namespaces map[string]struct{}
	series     map[namespacedClass]prometheus.Counter
}

type namespacedClass struct {
	namespace string
	class     lock.Class
}

// touch starts the series of l's namespace and class at 0.
func (c *deletionCounter) touch(l *lock.Lease) { c.of(l.Namespace(), l.Class) }

func (c *deletionCounter) inc(namespace string, class lock.Class) { c.of(namespace, class).Inc() }

// of returns the series of namespace and class, creating it at 0 on first use.
func (c *deletionCounter) of(namespace string, class lock.Class) prometheus.Counter {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, known := c.namespaces[namespace]; !known {
		if len(c.namespaces) < maxDeletionNamespaces {
			c.namespaces[namespace] = struct{}{}
		} else {
			namespace = otherNamespace
		}
	}
	k := namespacedClass{namespace, class}
	s, ok := c.series[k]
	if !ok {
		s = c.vec.WithLabelValues(namespace, class.String())
		c.series[k] = s
	}
	return s
}
