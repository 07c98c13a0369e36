package collector

import (
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// Settings is what every collector is built from: what the flags ask of the series, and the
// scrape clock, given once. The command derives it from its flags once they are valid; tests
// give their own clock.
type Settings struct {
	// Extended exports every family for every lock that has per-lock series
	// (--metrics.extended): the series the lean default leaves out because PromQL derives
	// them from the others, and, with PerLeaseNodeHeartbeats, the leader-election families for
	// node-heartbeat Leases.
	Extended bool
	// PerLeaseNodeHeartbeats exports per-lock series for every node-heartbeat Lease
	// (--metrics.node-heartbeats=per-lease), as for every other lock. Without it a node
	// heartbeat has a series only while it is overdue (lease_overdue_observed_renew_timestamp_seconds),
	// and the class is summed up: docs/metrics.md says why.
	PerLeaseNodeHeartbeats bool
	// Shard is this replica's shard, which every series of the class summary carries as the
	// label shard when Leases are split across replicas (--total-shards > 1); "" adds none.
	Shard string
	// Expected are the locks declared with --expect, already checked (known kinds, watched
	// namespaces, this replica's shard, no duplicates).
	Expected []lock.Ref
	// Now is the scrape clock; nil means time.Now.
	Now func() time.Time
}

// clock is Now, time.Now by default: the one place the default is given.
func (s Settings) clock() func() time.Time {
	if s.Now == nil {
		return time.Now
	}
	return s.Now
}

// exports reports whether f is exported for l under these settings. By default a
// node-heartbeat Lease has no series while its heartbeat is on time (a large cluster has tens
// of thousands, and the class counts say how they stand), every other lock seven.
func (s *Settings) exports(f *family, l *lock.Lease) bool { return s.exportsClass(f, l.Class) }

// exportsClass is exports for any lock of class c: the decision depends on nothing else.
func (s *Settings) exportsClass(f *family, c lock.Class) bool {
	node := c == lock.ClassNodeHeartbeat
	switch {
	case f.set == overdueNodes:
		return node
	case node && !s.PerLeaseNodeHeartbeats:
		return false
	case s.Extended || f.set == everyLock:
		return true
	case f.set == elections:
		return !node
	case f.set == leaderElections:
		return c == lock.ClassLeaderElection
	default:
		return false
	}
}

// writesAny reports whether l has any series at evaluation time at (Unix µs): false only
// for a node heartbeat without per-lease series that is on time, which a scrape's snapshot
// then leaves out (90% of a large cluster's Leases).
func (s *Settings) writesAny(l *lock.Lease, at int64) bool {
	if l.Class != lock.ClassNodeHeartbeat || s.PerLeaseNodeHeartbeats {
		return true
	}
	return overdue(l, at)
}
