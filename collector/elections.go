package collector

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/sharding"
)

// Elections counts what only an observer of every write can: renewals, which a scrape every
// 30 s cannot count when a lock is renewed every 2 s, and the time each election was without
// a leader, which lies between two watch events no scrape catches. It is one of the
// informer's observers (informer.Observer), updated as the stores observe each record, in
// event order, from every scope's goroutine, and the history's Cleared hook; the command
// wires both. The scrape-time families are the collectors'; these class counters live beside
// them so that every lease_class_* family is defined in this package.
//
// HA replicas each count every write they see, so their counts agree and dashboards take the
// max over replicas; a sharded exporter counts only its shard's locks, says which with the
// shard label, and dashboards sum the shards.
type Elections struct {
	renewals   *prometheus.CounterVec
	leaderless *prometheus.HistogramVec
	cleared    *prometheus.CounterVec
	// byClass are renewals' children, resolved once: a renewal is the commonest event.
	byClass [lock.NumClasses]prometheus.Counter
}

var _ informer.Observer = (*Elections)(nil)

// NewElections registers the counters in reg; shard is the shard label's value
// (sharding.Label), empty when the exporter is not sharded.
func NewElections(reg prometheus.Registerer, shard string) *Elections {
	constLabels := sharding.ConstLabels(shard)
	f := promauto.With(reg)
	e := &Elections{
		renewals: f.NewCounterVec(prometheus.CounterOpts{
			Name:        "lease_class_observed_renewals_total",
			Help:        "Renewals the exporter saw, by class: writes that moved renewTime forward under the same holder. A relist after a watch gap counts one, whatever it missed.",
			ConstLabels: constLabels,
		}, []string{"class"}),
		leaderless: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "lease_leaderless_seconds",
			Help:        "How long a lock was without a valid holder before each holder change the exporter saw live, by class and how the previous tenure ended: released (from the release), expired (from the expiry it judged), taken_over (0: the lease was still valid).",
			Buckets:     lock.LeaderlessBuckets,
			ConstLabels: constLabels,
		}, []string{"class", "ended"}),
		cleared: f.NewCounterVec(prometheus.CounterOpts{
			Name:        "lease_class_successors_cleared_total",
			Help:        "Tenures seen cleared by their predecessor, by class: a release within a lease duration of a takeover, after which the same successor took the lock again (a stalled client-go leader released a lock it no longer held). Only the classes that keep a history (--history.classes).",
			ConstLabels: constLabels,
		}, []string{"class"}),
	}
	for _, c := range lock.Classes {
		e.byClass[c] = e.renewals.WithLabelValues(c.String())
		e.cleared.WithLabelValues(c.String())
	}
	// Leader elections' three series exist from the start, so increase() sees the first
	// failover; other classes change holder rarely, and their series appear when one does.
	for _, ended := range []lock.Ending{lock.Released, lock.Expired, lock.TakenOver} {
		e.leaderless.WithLabelValues(lock.ClassLeaderElection.String(), ended.String())
	}
	return e
}

// Observed counts what one observation shows: a renewal, and the leaderless time of a take
// seen live.
func (e *Elections) Observed(t lock.Transition) {
	if t.Renewed {
		e.byClass[t.Rec.Class].Inc()
	}
	if t.LeaderlessKnown {
		e.leaderless.WithLabelValues(t.Rec.Class.String(), t.Ended.String()).Observe(float64(t.Leaderless) / 1e6)
	}
}

// Gone is informer.Observer's: a lock that went changes no count.
func (*Elections) Gone(*lock.Lease, int64, bool) {}

// Cleared is the history's hook (lock.HistoryOptions.Cleared).
func (e *Elections) Cleared(c lock.Class) { e.cleared.WithLabelValues(c.String()).Inc() }
