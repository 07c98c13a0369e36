package demo

import (
	"net/http"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

var httpClient = &http.Client{Timeout: 10 * time.Second}

// sample is metric's series for one Lease of the demo's exporter, and whether there is one.
func sample(s *exporterproc.Scrape, metric, namespace, lease string) (exporterproc.Sample, bool) {
	ss := s.Series(metric, map[string]string{"namespace": namespace, "lease": lease})
	if len(ss) == 0 {
		return exporterproc.Sample{}, false
	}
	return ss[0], true
}

// labels is the labels of metric's series for one Lease, nil when absent.
func labels(s *exporterproc.Scrape, metric, namespace, lease string) map[string]string {
	sm, _ := sample(s, metric, namespace, lease)
	return sm.Labels
}

// holderOf is lease_info's holder label for one Lease, "" when absent.
func holderOf(s *exporterproc.Scrape, namespace, lease string) string {
	return labels(s, "lease_info", namespace, lease)["holder"]
}

// value is metric's value for one Lease, 0 when absent.
func value(s *exporterproc.Scrape, metric, namespace, lease string) float64 {
	sm, _ := sample(s, metric, namespace, lease)
	return sm.Value
}
