package collector

import (
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// The class summary: how each class of lock stands, and how old its renewals are, in a fixed
// number of series whatever the number of locks. It is what the default exports of node
// heartbeats on time (90% of a large cluster's Leases; docs/metrics.md weighs it against
// per-lock series), and it sums up the other classes alike.
var (
	descClassLocks = prometheus.NewDesc("lease_class_locks",
		"Locks of the class by standing at evaluation time: on_time (held, renewed within half its lease duration), late (held, not renewed for longer), expired, released.",
		[]string{"class", "state"}, nil)
	descClassRenewAge = prometheus.NewDesc("lease_class_renew_age_locks",
		"Locks of the class whose record the exporter saw change at most le seconds before evaluation time, cumulative as a histogram's buckets; le=\"+Inf\" counts every lock with a renewTime.",
		[]string{"class", "le"}, nil)
)

// renewAgeLe are the le label values of lock.RenewAgeBuckets, then +Inf.
var renewAgeLe = func() []string {
	out := make([]string, 0, len(lock.RenewAgeBuckets)+1)
	for _, b := range lock.RenewAgeBuckets {
		out = append(out, strconv.FormatFloat(b.Seconds(), 'g', -1, 64))
	}
	return append(out, "+Inf")
}()

// ClassCollector reports, per class, how many locks stand where and a histogram of their
// renew ages, judged as lease_held is (informer.JudgedAt: frozen while the watch is down).
// It stays on client_golang whichever path renders the per-lease series: it has few series.
type ClassCollector struct {
	view informer.View
	now  func() time.Time
}

var _ prometheus.Collector = (*ClassCollector)(nil)

// NewClasses returns the collector of the view's class summary; nil now means time.Now.
func NewClasses(view informer.View, now func() time.Time) *ClassCollector {
	if now == nil {
		now = time.Now
	}
	return &ClassCollector{view: view, now: now}
}

// Describe sends every descriptor the collector may emit.
func (c *ClassCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descClassLocks
	ch <- descClassRenewAge
}

// classSummary is one class's counts: by standing, and by renew-age bucket (not cumulative;
// the last counts the ages beyond every bound).
type classSummary struct {
	standing [lock.NumStandings]int
	ages     [len(lock.RenewAgeBuckets) + 1]int
}

// Collect emits every class's summary once the cache has synced; a class without locks
// reads zeros, so a count that drops to none is seen to.
func (c *ClassCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.view.HasSynced() {
		return
	}
	at := informer.JudgedAt(c.view, c.now()).UnixMicro()
	var sums [lock.NumClasses]classSummary
	c.view.Range(func(l *lock.Lease) {
		s := &sums[l.Class]
		s.standing[l.StandingAt(at)]++
		if age, ok := l.RenewAge(at); ok {
			i, _ := slices.BinarySearch(lock.RenewAgeBuckets[:], time.Duration(age)*time.Microsecond)
			s.ages[i]++
		}
	})
	for _, class := range lock.Classes {
		s := &sums[class]
		for _, st := range lock.Standings {
			ch <- prometheus.MustNewConstMetric(descClassLocks, prometheus.GaugeValue, float64(s.standing[st]), class.String(), st.String())
		}
		cumulative := 0
		for i, n := range s.ages {
			cumulative += n
			ch <- prometheus.MustNewConstMetric(descClassRenewAge, prometheus.GaugeValue, float64(cumulative), class.String(), renewAgeLe[i])
		}
	}
}
