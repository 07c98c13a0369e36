package collector

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// The coordinated leader election series. Candidates are few (one per replica of a
// control-plane component) and their labels change only on upgrades, so they cost little;
// the per-Lease series exist only for Leases that have candidates or a strategy, so the
// Leases of ordinary elections and the kubelets' pay nothing.
var (
	candidateLabels   = []string{"candidate", "lease", "namespace"}
	descCandidateInfo = prometheus.NewDesc("lease_candidate_info",
		"LeaseCandidate of a coordinated leader election with its versions and strategy, always 1.",
		[]string{"binary_version", "candidate", "emulation_version", "lease", "namespace", "strategy"}, nil)
	descCandidateRenew = prometheus.NewDesc("lease_candidate_observed_renew_timestamp_seconds",
		"Unix time, by the exporter's clock, at which it saw the LeaseCandidate's renewTime change.", candidateLabels, nil)
	descCandidatePing = prometheus.NewDesc("lease_candidate_ping_timestamp_seconds",
		"Unix time of the LeaseCandidate's spec.pingTime, when the API server last asked it to renew.", candidateLabels, nil)
	descCandidates = prometheus.NewDesc("lease_candidates",
		"Number of LeaseCandidates contending for the Lease.", []string{"lease", "namespace"}, nil)
	descFreshCandidates = prometheus.NewDesc("lease_candidates_fresh",
		"Number of the Lease's LeaseCandidates the exporter saw renew within the last "+minutes(lock.CandidateFreshness)+".", []string{"lease", "namespace"}, nil)
	descHolderIsPreferred = prometheus.NewDesc("lease_holder_is_preferred",
		"Whether the Lease's holder is its spec.preferredHolder (1) or not (0); only for Leases that name one.", []string{"lease", "namespace"}, nil)
)

// CandidateCollector exports the LeaseCandidates of coordinated leader election and, per
// Lease, how many there are, how many are fresh, and whether the preferred holder holds it.
// It stays on client_golang whichever path renders the per-lease series: it has few series.
type CandidateCollector struct {
	view informer.CoordinatedView
	now  func() time.Time
}

var _ prometheus.Collector = (*CandidateCollector)(nil)

// NewCandidates returns the collector of the coordinated election series of view's Leases and
// LeaseCandidates.
func NewCandidates(view informer.CoordinatedView, s Settings) *CandidateCollector {
	return &CandidateCollector{view: view, now: s.clock()}
}

// Describe sends every descriptor the collector may emit.
func (c *CandidateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCandidateInfo, descCandidateRenew, descCandidatePing, descCandidates, descFreshCandidates, descHolderIsPreferred} {
		ch <- d
	}
}

// leaseKey names a Lease in the count map.
type leaseKey struct{ namespace, name string }

type candidateCount struct{ total, fresh int }

// Collect emits the series once the cache (candidates included) has synced.
func (c *CandidateCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.view.HasSynced() {
		return
	}
	at := c.view.JudgedAt(c.now()).UnixMicro()
	// Without the candidates, a coordinated Lease's count would read 0 and page; the
	// preferred holder comes from the Lease itself and is exported either way.
	watching := c.view.WatchingCandidates()
	counts := map[leaseKey]candidateCount{}
	c.view.RangeCandidates(func(cd *lock.Candidate) {
		ns, name, lease := cd.Namespace(), cd.Name(), cd.LeaseName
		ch <- prometheus.MustNewConstMetric(descCandidateInfo, prometheus.GaugeValue, 1,
			cd.BinaryVersion, name, cd.EmulationVersion, lease, ns, cd.Strategy)
		if cd.ObservedRenewTime != 0 {
			ch <- prometheus.MustNewConstMetric(descCandidateRenew, prometheus.GaugeValue, micros(cd.ObservedRenewTime), name, lease, ns)
		}
		if cd.HasPingTime {
			ch <- prometheus.MustNewConstMetric(descCandidatePing, prometheus.GaugeValue, micros(cd.PingTime), name, lease, ns)
		}
		k := leaseKey{ns, lease}
		n := counts[k]
		n.total++
		if cd.Fresh(at) {
			n.fresh++
		}
		counts[k] = n
	})
	c.view.Range(func(l *lock.Lease) {
		if l.Kind() != lock.KindLease {
			return
		}
		if watching && l.Strategy() != "" {
			k := leaseKey{l.Namespace(), l.Name()}
			counts[k] = counts[k] // a coordinated Lease without candidates reads 0
		}
		if preferred := l.PreferredHolder(); preferred != "" {
			ch <- prometheus.MustNewConstMetric(descHolderIsPreferred, prometheus.GaugeValue, boolFloat(l.Holder == preferred), l.Name(), l.Namespace())
		}
	})
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(descCandidates, prometheus.GaugeValue, float64(n.total), k.name, k.namespace)
		ch <- prometheus.MustNewConstMetric(descFreshCandidates, prometheus.GaugeValue, float64(n.fresh), k.name, k.namespace)
	}
}

// minutes spells d for a HELP text: "10 minutes".
func minutes(d time.Duration) string {
	return strconv.FormatFloat(d.Minutes(), 'f', -1, 64) + " minutes"
}
