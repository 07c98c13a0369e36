package exporterproc

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one parsed /metrics response.
type Scrape struct {
	Text     string
	Families map[string]*dto.MetricFamily
}

// Scrape fetches and parses /metrics.
func (e *Exporter) Scrape() (*Scrape, error) { return ScrapeURL(e.URL() + "/metrics") }

// ScrapeURL fetches and parses the text exposition at url: an exporter this package did not
// start, such as the demo's.
func ScrapeURL(url string) (*Scrape, error) {
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
		return nil, fmt.Errorf("%s: %s\n%s", url, resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", url, err)
	}
	return &Scrape{Text: string(body), Families: fams}, nil
}

// Sample is one series.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Series returns the samples of metric whose labels include match.
func (s *Scrape) Series(metric string, match map[string]string) []Sample {
	var out []Sample
	for _, m := range s.matching(metric, match) {
		var v float64
		switch {
		case m.Gauge != nil:
			v = m.GetGauge().GetValue()
		case m.Counter != nil:
			v = m.GetCounter().GetValue()
		case m.Untyped != nil:
			v = m.GetUntyped().GetValue()
		}
		out = append(out, Sample{Labels: labelsOf(m), Value: v})
	}
	return out
}

// Histogram returns the one histogram of metric whose labels include match, nil if none or
// more than one match.
func (s *Scrape) Histogram(metric string, match map[string]string) *dto.Histogram {
	ms := s.matching(metric, match)
	if len(ms) != 1 {
		return nil
	}
	return ms[0].GetHistogram()
}

// matching returns the series of metric whose labels include match.
func (s *Scrape) matching(metric string, match map[string]string) []*dto.Metric {
	var out []*dto.Metric
	mf := s.Families[metric]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		labels := labelsOf(m)
		for k, v := range match {
			if labels[k] != v {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

func labelsOf(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, lp := range m.GetLabel() {
		labels[lp.GetName()] = lp.GetValue()
	}
	return labels
}

// Value returns the single value of metric for one lease, and whether it exists.
func (s *Scrape) Value(metric, namespace, lease string) (float64, bool) {
	ss := s.Series(metric, map[string]string{"namespace": namespace, "lease": lease})
	if len(ss) != 1 {
		return 0, false
	}
	return ss[0].Value, true
}

// LeaseLines returns the exposition lines for one lease, for failure messages.
func (s *Scrape) LeaseLines(namespace, lease string) string {
	var lines []string
	for _, l := range strings.Split(s.Text, "\n") {
		if strings.Contains(l, `namespace="`+namespace+`"`) && strings.Contains(l, `lease="`+lease+`"`) {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
