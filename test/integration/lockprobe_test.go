package integration_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// lockProbe looks at one lock of one kind through an exporter's /metrics.
type lockProbe struct {
	exp                  *exporterproc.Exporter
	kind, ns, name       string
	lines                string // the latest scrape's lines for this lock, for failure messages
	lastScrape           *exporterproc.Scrape
	lastErr, lastCondErr error
}

// lockMetrics is what one scrape said about one lock.
type lockMetrics struct {
	infos  int
	holder string
	values map[string]float64
	scrape *exporterproc.Scrape
}

func (m lockMetrics) v(metric string) float64 {
	if x, ok := m.values[metric]; ok {
		return x
	}
	return math.NaN()
}

func (p *lockProbe) read() (lockMetrics, error) {
	s, err := p.exp.Scrape()
	if err != nil {
		return lockMetrics{}, err
	}
	p.lastScrape = s
	match := map[string]string{"kind": p.kind, "namespace": p.ns, "lease": p.name}
	m := lockMetrics{values: map[string]float64{}, scrape: s}
	infos := s.Series("lease_info", match)
	if m.infos = len(infos); m.infos > 0 {
		m.holder = infos[0].Labels["holder"]
	}
	for _, metric := range perLeaseMetrics {
		if ss := s.Series(metric, match); len(ss) == 1 {
			m.values[metric] = ss[0].Value
		}
	}
	var lines []string
	for _, l := range strings.Split(s.LeaseLines(p.ns, p.name), "\n") {
		if strings.Contains(l, `kind="`+p.kind+`"`) {
			lines = append(lines, l)
		}
	}
	p.lines = strings.Join(lines, "\n")
	return m, nil
}

func (p *lockProbe) fatalf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Fatalf("%s %s/%s: %s\n--- /metrics lines ---\n%s", p.kind, p.ns, p.name, fmt.Sprintf(format, args...), p.lines)
}

// until scrapes until cond accepts a scrape; a broken error fails at once.
func (p *lockProbe) until(t *testing.T, what string, cond func(lockMetrics) error) lockMetrics {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		m, err := p.read()
		if err == nil {
			if err = cond(m); err == nil {
				return m
			}
		}
		if errors.As(err, new(broken)) || time.Now().After(end) {
			p.fatalf(t, "%s: %v", what, err)
		}
		time.Sleep(poll)
	}
}

// parseErrors returns lease_exporter_lock_parse_errors_total by "kind/reason".
func parseErrors(t *testing.T, exp *exporterproc.Exporter) map[string]float64 {
	t.Helper()
	s, err := exp.Scrape()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, x := range s.Series("lease_exporter_lock_parse_errors_total", nil) {
		out[x.Labels["kind"]+"/"+x.Labels["reason"]] = x.Value
	}
	return out
}

// partlyReadableLogs counts the exporter's log lines about ns/name's unreadable record.
func partlyReadableLogs(exp *exporterproc.Exporter, ns, name string) int {
	n := 0
	for l := range strings.Lines(exp.Logs()) {
		if strings.Contains(l, "only partly readable") && strings.Contains(l, "namespace="+ns+" ") && strings.Contains(l, "name="+name+" ") {
			n++
		}
	}
	return n
}
