package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/lock"
)

var descExpected = prometheus.NewDesc("lease_expected_present",
	"Whether a lock declared with --expect exists (1) or not (0), as of the last update of the exporter's view.",
	[]string{"kind", "lease", "namespace"}, nil)

// ExpectedView is what the expected locks are looked up in: the informer's Cache, the same
// view the per-lease series read, so a lock counts as present exactly when it has those series.
type ExpectedView interface {
	HasSynced() bool
	Has(kind lock.Kind, namespace, name string) bool
}

// ExpectedCollector exports one series per expected lock.
type ExpectedCollector struct {
	view  ExpectedView
	locks []lock.Ref
}

var _ prometheus.Collector = (*ExpectedCollector)(nil)

// NewExpected returns the collector of the expected locks, s.Expected.
func NewExpected(view ExpectedView, s Settings) *ExpectedCollector {
	return &ExpectedCollector{view: view, locks: s.Expected}
}

// Describe sends the collector's one descriptor.
func (c *ExpectedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descExpected }

// Collect emits the expected locks' presence, only once the cache has synced: before the
// initial list every lock would read as missing. While the watch is down the view, and so
// this series, stays as it was last seen; the alert ignores a replica whose watch is down.
func (c *ExpectedCollector) Collect(ch chan<- prometheus.Metric) {
	if len(c.locks) == 0 || !c.view.HasSynced() {
		return
	}
	for _, e := range c.locks {
		present := c.view.Has(e.Kind, e.Namespace, e.Name)
		ch <- prometheus.MustNewConstMetric(descExpected, prometheus.GaugeValue, boolFloat(present), e.Kind.String(), e.Name, e.Namespace)
	}
}
