// Package collector turns the informer's cached Leases into Prometheus metrics at scrape time.
package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// LeaseCollector reads the informer's view at scrape time and builds const metrics, so
// deleted Leases disappear by themselves and concurrent scrapes share no mutable state.
// TextWriter renders the same series faster; this collector serves every other format.
type LeaseCollector struct {
	view     informer.View
	now      func() time.Time
	settings Settings
}

var _ prometheus.Collector = (*LeaseCollector)(nil)

// New returns a collector of the per-lease series.
func New(view informer.View, s Settings) *LeaseCollector {
	return &LeaseCollector{view: view, now: s.clock(), settings: s}
}

// Describe sends every descriptor the collector may emit.
func (c *LeaseCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range families {
		ch <- f.desc
	}
}

// Collect emits the per-lease series, only once the cache has synced: never a partial view.
func (c *LeaseCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.view.HasSynced() {
		return
	}
	at := c.view.JudgedAt(c.now()).UnixMicro()
	c.view.Range(func(l *lock.Lease) {
		for _, f := range families {
			v, ok := f.value(l, at)
			if !ok || !c.settings.exports(f, l) {
				continue
			}
			if f.counter {
				ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(f.desc, prometheus.CounterValue, v, f.created(l), f.labelValues(l)...)
			} else {
				ch <- prometheus.MustNewConstMetric(f.desc, prometheus.GaugeValue, v, f.labelValues(l)...)
			}
		}
	})
}
