package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

var (
	descSynced = prometheus.NewDesc("lease_exporter_cache_synced",
		"Whether the informer cache has completed its initial list (1) or not (0).", nil, nil)
	descLeases = prometheus.NewDesc("lease_exporter_leases",
		"Number of Leases the exporter exports, by class.", []string{"class"}, nil)
	descStale = prometheus.NewDesc("lease_exporter_watch_stale_seconds",
		"Seconds the exporter's view may lag the API server: 0 while the watch is open and caught up.", nil, nil)
)

// StatusCollector reports the state of the exporter's view (synced, staleness, lock counts)
// and the class summary (lease_class_locks, lease_class_renew_age_seconds), from one pass over
// the view per scrape. It stays on client_golang whichever path renders the per-lease series:
// it has few series.
type StatusCollector struct {
	view                informer.Ordered
	now                 func() time.Time
	descLocks, descAges *prometheus.Desc
}

var _ prometheus.Collector = (*StatusCollector)(nil)

// NewStatus returns the view's status and class summary collector.
func NewStatus(view informer.Ordered, s Settings) *StatusCollector {
	c := &StatusCollector{view: view, now: s.clock()}
	c.descLocks, c.descAges = classDescs(s.Shard)
	return c
}

// Describe sends every descriptor the collector may emit.
func (c *StatusCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descSynced
	ch <- descLeases
	ch <- descStale
	ch <- c.descLocks
	ch <- c.descAges
}

// Collect emits the status metrics; lock counts and the class summary only once synced.
func (c *StatusCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.now()
	at := c.view.JudgedAt(now)
	ch <- prometheus.MustNewConstMetric(descStale, prometheus.GaugeValue, informer.Staleness(at, now).Seconds())
	if !c.view.HasSynced() {
		ch <- prometheus.MustNewConstMetric(descSynced, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descSynced, prometheus.GaugeValue, 1)
	var sums lock.Summaries
	atMicros := at.UnixMicro()
	// In batches, warmed as the writer's are (lock.Warm): at 100k locks this pass comes
	// before a scrape's first byte.
	c.view.Scan(func(batch []*lock.Lease) {
		lock.Warm(batch)
		for _, l := range batch {
			sums.Add(l, atMicros)
		}
	})
	for _, class := range lock.Classes {
		ch <- prometheus.MustNewConstMetric(descLeases, prometheus.GaugeValue, float64(sums[class].Total()), class.String())
	}
	c.collectClasses(ch, &sums)
}
