package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// The class summary: how each class of lock stands, and how old its renewals are, in a fixed
// number of series whatever the number of locks. It is what the default exports of node
// heartbeats on time (90% of a large cluster's Leases; docs/metrics.md weighs it against
// per-lock series), and it sums up the other classes alike.
const (
	classLocksHelp    = "Locks of the class by standing at evaluation time: on_time (held, renewed within half its lease duration), lagging (held, not renewed for longer), expired, released."
	classRenewAgeHelp = "Renew ages of the class's locks with a renewTime: how long before evaluation time the exporter saw each record change. A snapshot at each scrape, not accumulated: read it with histogram_quantile, never rate."
	classLocksName    = "lease_class_locks"
	classRenewAgeName = "lease_class_renew_age_seconds"
)

// renewAgeBounds are lock.RenewAgeBuckets in seconds, the histogram's upper bounds.
var renewAgeBounds = func() []float64 {
	out := make([]float64, len(lock.RenewAgeBuckets))
	for i, b := range lock.RenewAgeBuckets {
		out[i] = b.Seconds()
	}
	return out
}()

// ClassCollector reports, per class, how many locks stand where and a histogram of their
// renew ages, judged as lease_held is (informer.JudgedAt: frozen while the watch is down).
// It stays on client_golang whichever path renders the per-lease series: it has few series.
type ClassCollector struct {
	view                informer.View
	now                 func() time.Time
	descLocks, descAges *prometheus.Desc
}

var _ prometheus.Collector = (*ClassCollector)(nil)

// NewClasses returns the collector of the view's class summary. A sharded exporter labels
// every series with s.Shard: its counts are of its shard's locks, and a dashboard sums them
// over shards after taking one replica of each (max by shard).
func NewClasses(view informer.View, s Settings) *ClassCollector {
	var constLabels prometheus.Labels
	if s.Shard != "" {
		constLabels = prometheus.Labels{"shard": s.Shard}
	}
	return &ClassCollector{view: view, now: s.clock(),
		descLocks: prometheus.NewDesc(classLocksName, classLocksHelp, []string{"class", "state"}, constLabels),
		descAges:  prometheus.NewDesc(classRenewAgeName, classRenewAgeHelp, []string{"class"}, constLabels)}
}

// Describe sends every descriptor the collector may emit.
func (c *ClassCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.descLocks
	ch <- c.descAges
}

// Collect emits every class's summary once the cache has synced; a class without locks
// reads zeros, so a count that drops to none is seen to.
func (c *ClassCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.view.HasSynced() {
		return
	}
	at := informer.JudgedAt(c.view, c.now()).UnixMicro()
	var sums lock.Summaries
	c.view.Range(func(l *lock.Lease) { sums.Add(l, at) })
	for _, class := range lock.Classes {
		s := &sums[class]
		for _, st := range lock.Standings {
			ch <- prometheus.MustNewConstMetric(c.descLocks, prometheus.GaugeValue, float64(s.Standings[st]), class.String(), st.String())
		}
		buckets, cumulative := make(map[float64]uint64, len(renewAgeBounds)), uint64(0)
		for i, bound := range renewAgeBounds {
			cumulative += uint64(s.Ages[i])
			buckets[bound] = cumulative
		}
		ch <- prometheus.MustNewConstHistogram(c.descAges, cumulative+uint64(s.Ages[len(renewAgeBounds)]), micros(s.AgeSum), buckets, class.String())
	}
}
