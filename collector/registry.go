package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/informer"
)

// Source is what the collectors read, all of it the informer's cache: the view of the locks,
// the LeaseCandidates, and whether a lock is there (for --expect).
type Source interface {
	informer.Ordered
	informer.CandidateView
	ExpectedView
}

// registered are the collectors on the exporter's registry, one row each, as node_exporter's
// registerCollector ties a collector to its default and its factory: when it is on, and how it
// is built from the cache and the one Settings; Build keeps the table's order. The per-lock
// series are not rows: the exposition handler renders them itself (Collectors.Text and
// Collectors.Leases).
var registered = []struct {
	// on reports whether the settings want it; nil: always.
	on    func(Settings) bool
	build func(Source, Settings) prometheus.Collector
}{
	// status: lease_exporter_cache_synced, _leases, _watch_stale_seconds, lease_class_locks,
	// lease_class_renew_age_seconds.
	{build: func(src Source, s Settings) prometheus.Collector { return NewStatus(src, s) }},
	// candidates: coordinated leader election.
	{build: func(src Source, s Settings) prometheus.Collector { return NewCandidates(src, s) }},
	// expected: lease_expected_present, with --expect.
	{on: func(s Settings) bool { return len(s.Expected) > 0 },
		build: func(src Source, s Settings) prometheus.Collector { return NewExpected(src, s) }},
}

// Collectors are every collector of the exporter's series, built from one Settings.
type Collectors struct {
	// Text renders the per-lock series straight into the text format; Leases is the same
	// series for client_golang, which renders every other format.
	Text   *TextWriter
	Leases *LeaseCollector
	// Registered go on the exporter's registry, beside the Go and process collectors.
	Registered []prometheus.Collector
}

// Build builds every collector the settings want, over src.
func Build(src Source, s Settings) Collectors {
	cs := Collectors{Text: NewTextWriter(src, s), Leases: New(src, s)}
	for _, r := range registered {
		if r.on == nil || r.on(s) {
			cs.Registered = append(cs.Registered, r.build(src, s))
		}
	}
	return cs
}
