// Package collector turns the informer's cached Leases into Prometheus metrics at scrape time.
package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/informer"
)

// LeaseCollector reads the informer's view at scrape time and builds const metrics, so
// deleted Leases disappear by themselves and concurrent scrapes share no mutable state.
type LeaseCollector struct {
	view informer.View
	now  func() time.Time
}

var _ prometheus.Collector = (*LeaseCollector)(nil)

// New returns a collector over view. now is the scrape clock; nil means time.Now.
func New(view informer.View, now func() time.Time) *LeaseCollector {
	if now == nil {
		now = time.Now
	}
	return &LeaseCollector{view: view, now: now}
}

// Describe sends every descriptor the collector may emit.
func (c *LeaseCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect emits the per-lease series (only once the cache has synced, never a partial view)
// and the cache self-metrics.
func (c *LeaseCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.now()
	asOf := c.view.FreshAsOf(now)
	ch <- gauge(descStale, max(now.Sub(asOf).Seconds(), 0))
	if !c.view.HasSynced() {
		ch <- gauge(descSynced, 0)
		return
	}
	ch <- gauge(descSynced, 1)
	var perClass [3]int
	at := asOf.UnixMicro()
	c.view.Range(func(l *informer.Lease) {
		perClass[l.Class]++
		collectLease(ch, l, at)
	})
	for _, class := range informer.Classes {
		ch <- gauge(descLeases, float64(perClass[class]), class.String())
	}
}

// collectLease emits one Lease's series; at is the evaluation time in Unix µs.
func collectLease(ch chan<- prometheus.Metric, l *informer.Lease, at int64) {
	ns, name, class := l.Namespace(), l.Name(), l.Class.String()
	ch <- gauge(descInfo, 1, ns, name, class, l.Holder, l.Strategy(), l.PreferredHolder())
	ch <- gauge(descHeld, boolFloat(l.Held(at)), ns, name, class)
	if l.HasRenewTime {
		ch <- gauge(descRenew, micros(l.RenewTime), ns, name, class)
		ch <- gauge(descRenewAge, micros(at-l.RenewTime), ns, name, class)
		if l.HasDuration {
			ch <- gauge(descExpiry, micros(l.RenewTime)+float64(l.DurationSeconds), ns, name, class)
		}
	}
	if l.HasAcquireTime {
		ch <- gauge(descAcquire, micros(l.AcquireTime), ns, name, class)
	}
	if l.HasDuration {
		ch <- gauge(descDuration, float64(l.DurationSeconds), ns, name, class)
	}
	if l.HasTransitions {
		ch <- counter(descTransitions, float64(l.Transitions), time.Unix(l.Created, 0), ns, name, class)
	}
	ch <- counter(descObservedChanges, float64(l.ObservedHolderChanges), time.UnixMicro(l.FirstSeen), ns, name, class)
	if l.ObservedRenewTime != 0 {
		ch <- gauge(descObservedRenew, micros(l.ObservedRenewTime), ns, name, class)
	}
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(d *prometheus.Desc, v float64, created time.Time, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetricWithCreatedTimestamp(d, prometheus.CounterValue, v, created, labels...)
}

func micros(us int64) float64 { return float64(us) / 1e6 }

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
