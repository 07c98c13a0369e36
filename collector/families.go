package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/informer"
)

// family is one per-lease metric: the single definition both exposition paths (client_golang
// and the fast text writer) read, so they cannot drift in name, help, type or value.
type family struct {
	name, help string
	counter    bool
	// value returns the sample for l at evaluation time at (Unix µs); ok=false omits the
	// series because its source field is missing.
	value func(l *informer.Lease, at int64) (v float64, ok bool)
	// created is the counter's created timestamp (client_golang path only; text has none).
	created func(l *informer.Lease) time.Time
	// nodeEssential families are kept for node Leases under --node-leases=reduced.
	nodeEssential bool
	desc          *prometheus.Desc
}

var (
	leaseLabels = []string{"class", "lease", "namespace"}
	// infoLabels are lease_info's labels, in client_golang's (sorted) order.
	infoLabels = []string{"class", "holder", "lease", "namespace", "preferred_holder", "strategy"}
)

// families lists the per-lease metrics sorted by name, the order of the exposition.
var families = withDescs([]*family{
	{name: "lease_acquire_timestamp_seconds", help: "Unix time of spec.acquireTime, when the current holder acquired the Lease.",
		value: func(l *informer.Lease, _ int64) (float64, bool) { return micros(l.AcquireTime), l.HasAcquireTime }},
	{name: "lease_duration_seconds", help: "Value of spec.leaseDurationSeconds, how long after the last renewal the Lease expires.",
		value: func(l *informer.Lease, _ int64) (float64, bool) { return float64(l.DurationSeconds), l.HasDuration }},
	{name: "lease_expiry_timestamp_seconds", help: "Unix time at which the Lease expires unless renewed: renewTime plus leaseDurationSeconds.",
		value: func(l *informer.Lease, _ int64) (float64, bool) {
			return micros(l.RenewTime) + float64(l.DurationSeconds), l.HasRenewTime && l.HasDuration
		}},
	{name: "lease_held", help: "Whether the Lease has a holder and is not expired at evaluation time (1) or not (0).", nodeEssential: true,
		value: func(l *informer.Lease, at int64) (float64, bool) { return boolFloat(l.Held(at)), true }},
	{name: "lease_info", help: "Current holder of the Lease (holder is empty when there is none), always 1.",
		value: func(*informer.Lease, int64) (float64, bool) { return 1, true }},
	{name: "lease_observed_holder_changes_total", help: "Holder changes this exporter saw on its watch since it first saw the Lease.", counter: true,
		value:   func(l *informer.Lease, _ int64) (float64, bool) { return float64(l.ObservedHolderChanges), true },
		created: func(l *informer.Lease) time.Time { return time.UnixMicro(l.FirstSeen) }},
	{name: "lease_observed_renew_timestamp_seconds", help: "Unix time, by the exporter's clock, at which it saw spec.renewTime change.",
		value: func(l *informer.Lease, _ int64) (float64, bool) {
			return micros(l.ObservedRenewTime), l.ObservedRenewTime != 0
		}},
	{name: "lease_renew_age_seconds", help: "Seconds from spec.renewTime to evaluation time.", nodeEssential: true,
		value: func(l *informer.Lease, at int64) (float64, bool) { return micros(at - l.RenewTime), l.HasRenewTime }},
	{name: "lease_renew_timestamp_seconds", help: "Unix time of spec.renewTime, the holder's last renewal, by the holder's clock.",
		value: func(l *informer.Lease, _ int64) (float64, bool) { return micros(l.RenewTime), l.HasRenewTime }},
	{name: "lease_transitions_total", help: "Value of spec.leaseTransitions, holder changes as counted by the electing clients.", counter: true,
		value:   func(l *informer.Lease, _ int64) (float64, bool) { return float64(l.Transitions), l.HasTransitions },
		created: func(l *informer.Lease) time.Time { return time.Unix(l.Created, 0) }},
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
func (f *family) labelValues(l *informer.Lease) []string {
	if f.name == infoFamily {
		return []string{l.Class.String(), l.Holder, l.Name(), l.Namespace(), l.PreferredHolder(), l.Strategy()}
	}
	return []string{l.Class.String(), l.Name(), l.Namespace()}
}

func micros(us int64) float64 { return float64(us) / 1e6 }

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
