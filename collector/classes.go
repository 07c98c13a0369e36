package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/sharding"
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

// classDescs are the class summary's descriptors: a sharded exporter labels every series
// with its shard (Settings.Shard): its counts are of its shard's locks, and a dashboard sums
// them over shards after taking one replica of each (max by shard).
func classDescs(shard string) (locks, ages *prometheus.Desc) {
	constLabels := sharding.ConstLabels(shard)
	return prometheus.NewDesc(classLocksName, classLocksHelp, []string{"class", "state"}, constLabels),
		prometheus.NewDesc(classRenewAgeName, classRenewAgeHelp, []string{"class"}, constLabels)
}

// collectClasses emits every class's summary (lock.Summaries, judged as lease_held is); a
// class without locks reads zeros, so a count that drops to none is seen to.
func (c *StatusCollector) collectClasses(ch chan<- prometheus.Metric, sums *lock.Summaries) {
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
