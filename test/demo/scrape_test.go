package demo

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var httpClient = &http.Client{Timeout: 10 * time.Second}

// scraped is one parsed /metrics of the demo's exporter.
type scraped map[string]*dto.MetricFamily

func scrape(url string) (scraped, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", url, err)
	}
	return fams, nil
}

// series returns the labels and value of metric's series for one Lease, nil when absent.
func (s scraped) series(metric, namespace, lease string) (map[string]string, float64) {
	for _, m := range s[metric].GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		if labels["namespace"] == namespace && labels["lease"] == lease {
			return labels, m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue()
		}
	}
	return nil, 0
}

// info is lease_info's labels for one Lease, nil when absent.
func (s scraped) info(namespace, lease string) map[string]string {
	labels, _ := s.series("lease_info", namespace, lease)
	return labels
}

func (s scraped) holder(namespace, lease string) string { return s.info(namespace, lease)["holder"] }

func (s scraped) value(metric, namespace, lease string) float64 {
	_, v := s.series(metric, namespace, lease)
	return v
}
