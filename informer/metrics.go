package informer

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
)

// metrics are the informer's self-metrics: how well the exporter sees the API server.
type metrics struct {
	watchUp     prometheus.Gauge
	watchEvents *prometheus.CounterVec
	// watchEvents' children, resolved once: the store counts every event.
	added, modified, deleted, bookmark prometheus.Counter
	watchErrors                        *prometheus.CounterVec
	lastEventEpoch                     prometheus.Gauge
	// parseErrors counts the fields of annotation locks' leader records that could not be read.
	parseErrors       *prometheus.CounterVec
	candidatesWatched prometheus.Gauge
	// lockDeletions counts lock incarnations that went (deletions.go bounds its namespaces).
	lockDeletions *prometheus.CounterVec
}

// errorReasons are pre-created, as are the event types, so rate() has a zero to start from.
var errorReasons = []string{"forbidden", "unauthorized", "connection", "expired", "throttled", "timeout", "other"}

func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	m := &metrics{
		watchUp: f.NewGauge(prometheus.GaugeOpts{
			Name: "lease_exporter_watch_up",
			Help: "Whether every watch the exporter needs is open on the API server (1) or any is broken (0).",
		}),
		watchEvents: f.NewCounterVec(prometheus.CounterOpts{
			Name: "lease_exporter_watch_events_total",
			Help: "Watch events received from the API server, by event type, before shard filtering.",
		}, []string{"type"}),
		watchErrors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "lease_exporter_watch_errors_total",
			Help: "Failed list and watch calls to the API server, by reason.",
		}, []string{"reason"}),
		lastEventEpoch: f.NewGauge(prometheus.GaugeOpts{
			Name: "lease_exporter_last_watch_event_timestamp_seconds",
			Help: "Unix time of the last watch event received from the API server, 0 before the first.",
		}),
		parseErrors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "lease_exporter_lock_parse_errors_total",
			Help: "Fields of ConfigMap and Endpoints locks' leader records that could not be read, by lock kind and reason, counted once per new version of the object.",
		}, []string{"kind", "reason"}),
		lockDeletions: f.NewCounterVec(prometheus.CounterOpts{
			Name: "lease_exporter_lock_deletions_total",
			Help: "Locks the exporter saw deleted (a DELETED event, or gone or recreated with a new UID in a relist), by namespace and class.",
		}, []string{"namespace", "class"}),
		candidatesWatched: f.NewGauge(prometheus.GaugeOpts{
			Name: "lease_exporter_lease_candidates_watched",
			Help: "Whether the exporter watches LeaseCandidates (1) or not (0: turned off, not served by the API server, forbidden, or their discovery throttled and being retried).",
		}),
	}
	m.added, m.modified = m.watchEvents.WithLabelValues("added"), m.watchEvents.WithLabelValues("modified")
	m.deleted, m.bookmark = m.watchEvents.WithLabelValues("deleted"), m.watchEvents.WithLabelValues("bookmark")
	for _, r := range errorReasons {
		m.watchErrors.WithLabelValues(r)
	}
	return m
}

// countParseErrors starts the parse error series of an annotation lock kind at zero.
func (m *metrics) countParseErrors(k lock.Kind) {
	for _, r := range leaderrecord.Reasons {
		m.parseErrors.WithLabelValues(k.String(), string(r))
	}
}

// setWatchUp sets lease_exporter_watch_up; health is its only writer.
func (m *metrics) setWatchUp(up bool) {
	if up {
		m.watchUp.Set(1)
	} else {
		m.watchUp.Set(0)
	}
}
