package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/lock"
)

// family is one per-lease metric: the single definition both exposition paths (client_golang
// and the fast text writer) read, so they cannot drift in name, help, type or value.
type family struct {
	name, help string
	counter    bool
	// value returns the sample for l at evaluation time at (Unix µs); ok=false omits the
	// series because its source field is missing.
	value func(l *lock.Lease, at int64) (v float64, ok bool)
	// created is the counter's created timestamp (client_golang path only; text has none).
	created func(l *lock.Lease) time.Time
	// set says which locks export the family (see settings.exports).
	set  familySet
	desc *prometheus.Desc
}

// familySet is who gets a family by default. The default is lean because every series costs
// the user's Prometheus about 3 KB of memory (docs/benchmarks.md); what the default drops is
// derivable in PromQL from what it keeps (docs/metrics.md gives the queries).
type familySet uint8

const (
	// everyLock: every lock; node-heartbeat Leases only with --metrics.node-heartbeats=per-lease.
	everyLock familySet = iota
	// elections: leader-election and apiserver-identity locks; node Leases with
	// --metrics.extended and --metrics.node-heartbeats=per-lease.
	elections
	// extended: only with --metrics.extended.
	extended
	// overdueNodes: node-heartbeat Leases, whatever the flags; the family's value says when.
	overdueNodes
	// leaderElections: leader-election locks; the other classes with --metrics.extended
	// (node Leases also with --metrics.node-heartbeats=per-lease), as their class counts
	// them by default.
	leaderElections
)

var (
	leaseLabels = []string{"class", "kind", "lease", "namespace"}
	// infoLabels are lease_info's labels, in client_golang's (sorted) order.
	infoLabels = []string{"class", "holder", "kind", "lease", "namespace", "owner_kind", "owner_name", "preferred_holder", "strategy"}
)

// families lists the per-lease metrics sorted by name, the order of the exposition.
var families = withDescs([]*family{
	{name: "lease_acquire_timestamp_seconds", set: elections, help: "Unix time of spec.acquireTime, when the current holder acquired the Lease.",
		value: func(l *lock.Lease, _ int64) (float64, bool) { return micros(l.AcquireTime), l.HasAcquireTime }},
	{name: "lease_duration_seconds", set: elections, help: "Value of spec.leaseDurationSeconds, how long after the last renewal the Lease expires.",
		value: func(l *lock.Lease, _ int64) (float64, bool) { return float64(l.DurationSeconds), l.HasDuration }},
	{name: "lease_expiry_timestamp_seconds", set: extended, help: "Unix time, by the exporter's clock, at which the Lease expires unless its record changes: when the exporter saw it change plus leaseDurationSeconds.",
		value: func(l *lock.Lease, _ int64) (float64, bool) {
			at, ok := l.Expiry()
			return micros(at), ok
		}},
	{name: "lease_held", help: "Whether the Lease has a holder and, judged by when the exporter saw its record change, is not expired at evaluation time (1) or not (0).",
		value: func(l *lock.Lease, at int64) (float64, bool) { return boolFloat(l.Held(at)), true }},
	{name: "lease_holder_clock_skew_seconds", set: elections, help: "How far the holder's clock runs ahead of the exporter's (negative: behind), from the last renewal seen live on the watch.",
		value: func(l *lock.Lease, _ int64) (float64, bool) {
			ms, ok := l.ClockSkew()
			return float64(ms) / 1e3, ok
		}},
	{name: "lease_info", set: elections, help: "Current holder of the Lease (holder is empty when there is none), always 1.",
		value: func(*lock.Lease, int64) (float64, bool) { return 1, true }},
	{name: "lease_observed_holder_changes_total", set: elections, help: "Leadership changes since the exporter first saw the Lease: a new holder seen on the watch, or the rise of spec.leaseTransitions if larger.", counter: true,
		value:   func(l *lock.Lease, _ int64) (float64, bool) { return float64(l.ObservedHolderChanges), true },
		created: func(l *lock.Lease) time.Time { return time.UnixMicro(l.FirstSeen) }},
	{name: "lease_observed_renew_timestamp_seconds", help: "Unix time, by the exporter's clock, at which it saw the Lease's holder or renewTime change.",
		value: func(l *lock.Lease, _ int64) (float64, bool) {
			return micros(l.ObservedRenewTime), l.ObservedRenewTime != 0
		}},
	{name: "lease_observed_renewals_total", set: leaderElections, help: "Renewals the exporter saw since it first saw the Lease: writes that moved renewTime forward under the same holder. A relist after a watch gap counts one, whatever it missed.", counter: true,
		value:   func(l *lock.Lease, _ int64) (float64, bool) { return float64(l.ObservedRenewals), true },
		created: func(l *lock.Lease) time.Time { return time.UnixMicro(l.FirstSeen) }},
	{name: "lease_overdue_observed_renew_timestamp_seconds", set: overdueNodes, help: "Unix time, by the exporter's clock, at which it saw a node-heartbeat Lease's holder or renewTime change; only while the Lease is overdue (lagging, expired or released).",
		value: func(l *lock.Lease, at int64) (float64, bool) {
			return micros(l.ObservedRenewTime), overdue(l, at)
		}},
	{name: "lease_renew_age_seconds", set: extended, help: "Seconds from when the exporter saw the Lease's holder or renewTime change to evaluation time.",
		value: func(l *lock.Lease, at int64) (float64, bool) {
			age, ok := l.RenewAge(at)
			return micros(age), ok
		}},
	{name: "lease_renew_timestamp_seconds", set: extended, help: "Unix time of spec.renewTime, the holder's last renewal, by the holder's clock.",
		value: func(l *lock.Lease, _ int64) (float64, bool) { return micros(l.RenewTime), l.HasRenewTime }},
	{name: "lease_transitions_total", set: extended, help: "Value of spec.leaseTransitions, holder changes as counted by the electing clients.", counter: true,
		value:   func(l *lock.Lease, _ int64) (float64, bool) { return float64(l.Transitions), l.HasTransitions },
		created: func(l *lock.Lease) time.Time { return time.Unix(int64(l.Created), 0) }},
})

const infoFamily = "lease_info"

func withDescs(fs []*family) []*family {
	for _, f := range fs {
		labels := leaseLabels
		if f.name == infoFamily {
			labels = infoLabels
		}
		f.desc = prometheus.NewDesc(f.name, f.help, labels, nil)
	}
	return fs
}

// labelValues returns l's label values in the order of f's descriptor.
func (f *family) labelValues(l *lock.Lease) []string {
	if f.name == infoFamily {
		ownerKind, ownerName := l.Owner()
		return []string{l.Class.String(), l.Holder, l.Kind().String(), l.Name(), l.Namespace(), ownerKind, ownerName, l.PreferredHolder(), l.Strategy()}
	}
	return []string{l.Class.String(), l.Kind().String(), l.Name(), l.Namespace()}
}

// overdue reports whether the node heartbeat l has lease_overdue_observed_renew_timestamp_seconds
// at evaluation time at: not on time, and with an observed renew time to give.
func overdue(l *lock.Lease, at int64) bool {
	return l.ObservedRenewTime != 0 && l.StandingAt(at).Overdue()
}

func micros(us int64) float64 { return float64(us) / 1e6 }

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
