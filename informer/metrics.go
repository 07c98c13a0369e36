package informer

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// metrics are the informer's self-metrics: how well the exporter sees the API server.
type metrics struct {
	watchUp     prometheus.Gauge
	watchEvents *prometheus.CounterVec
	// eventCounters resolves watchEvents' children once: the event path runs per renewal.
	eventCounters  map[string]prometheus.Counter
	watchErrors    *prometheus.CounterVec
	lastEventEpoch prometheus.Gauge
}

// Label values pre-created so rate() has a zero to start from.
var (
	eventTypes   = []string{"added", "modified", "deleted", "bookmark"}
	errorReasons = []string{"forbidden", "unauthorized", "connection", "expired", "timeout", "other"}
)

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
	}
	m.eventCounters = make(map[string]prometheus.Counter, len(eventTypes))
	for _, t := range eventTypes {
		m.eventCounters[t] = m.watchEvents.WithLabelValues(t)
	}
	for _, r := range errorReasons {
		m.watchErrors.WithLabelValues(r)
	}
	return m
}

// countEvent counts one watch event of type t (the lower-cased watch.EventType).
func (m *metrics) countEvent(t string) {
	c, ok := m.eventCounters[t]
	if !ok {
		c = m.watchEvents.WithLabelValues(t) // a type newer than this exporter
	}
	c.Inc()
}
