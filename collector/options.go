package collector

import "github.com/lease-exporter/lease-exporter/informer/lock"

// Option configures New and NewTextWriter.
type Option func(*settings)

type settings struct{ extended, perLeaseNodes bool }

// WithExtended exports every family for every lock that has per-lock series
// (--metrics.extended): the series the lean default leaves out because PromQL derives them
// from the others, and, with WithPerLeaseNodeHeartbeats, the leader-election families for
// node-heartbeat Leases.
func WithExtended(on bool) Option { return func(s *settings) { s.extended = on } }

// WithPerLeaseNodeHeartbeats exports per-lock series for every node-heartbeat Lease
// (--metrics.node-heartbeats=per-lease), as for every other lock. Without it a node
// heartbeat has a series only while it is overdue (lease_overdue_observed_renew_timestamp_seconds),
// and the class is summed up by ClassCollector: docs/metrics.md says why.
func WithPerLeaseNodeHeartbeats(on bool) Option { return func(s *settings) { s.perLeaseNodes = on } }

func newSettings(opts []Option) settings {
	var s settings
	for _, o := range opts {
		o(&s)
	}
	return s
}

// exports reports whether f is exported for l under these settings. By default a
// node-heartbeat Lease has no series while its heartbeat is on time (a large cluster has tens
// of thousands, and the class counts say how they stand), every other lock seven.
func (s settings) exports(f *family, l *lock.Lease) bool { return s.exportsClass(f, l.Class) }

// exportsClass is exports for any lock of class c: the decision depends on nothing else.
func (s settings) exportsClass(f *family, c lock.Class) bool {
	node := c == lock.ClassNodeHeartbeat
	switch {
	case f.set == overdueNodes:
		return node
	case node && !s.perLeaseNodes:
		return false
	case s.extended || f.set == everyLock:
		return true
	case f.set == elections:
		return !node
	default:
		return false
	}
}

// writesAny reports whether l has any series at evaluation time at (Unix µs): false only
// for a node heartbeat without per-lease series that is on time, which the writer then need
// not sort (90% of a large cluster's Leases).
func (s settings) writesAny(l *lock.Lease, at int64) bool {
	if l.Class != lock.ClassNodeHeartbeat || s.perLeaseNodes {
		return true
	}
	return overdue(l, at)
}
