package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Contract is the set of metric names docs/metrics.md documents: its
// `### name` headings. The exporter's own docs test keeps those headings equal
// to what it emits, so checking dashboards against them means a renamed
// metric breaks the dashboards' test too.
type Contract struct {
	names map[string]bool
	// histograms are the documented metrics whose section starts "Histogram": their
	// _bucket, _sum and _count series are what queries select.
	histograms map[string]bool
}

// A heading that is a metric name; prose headings such as
// "### Go and process collectors" do not match.
var metricHeading = regexp.MustCompile(`^###\s+([a-zA-Z_:][a-zA-Z0-9_:]*)\s*$`)

func LoadContract(path string) (*Contract, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &Contract{names: map[string]bool{}, histograms: map[string]bool{}}
	sc := bufio.NewScanner(f)
	heading := ""
	for sc.Scan() {
		if m := metricHeading.FindStringSubmatch(sc.Text()); m != nil {
			c.names[m[1]] = true
			heading = m[1]
			continue
		}
		if heading != "" && strings.HasPrefix(sc.Text(), "Histogram") {
			c.histograms[heading] = true
		}
		heading = ""
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(c.names) == 0 {
		return nil, fmt.Errorf("%s: no `### metric_name` headings found", path)
	}
	return c, nil
}

// extendedOnly are the series the exporter exports only with --metrics.extended
// (the lean default, docs/metrics.md): a panel built on one shows "No data" to
// everyone running the defaults. Derive them in PromQL instead (renew age:
// timestamp(lease_observed_renew_timestamp_seconds) - lease_observed_renew_timestamp_seconds).
var extendedOnly = map[string]bool{
	"lease_renew_age_seconds":        true,
	"lease_expiry_timestamp_seconds": true,
	"lease_renew_timestamp_seconds":  true,
	"lease_transitions_total":        true,
}

// perLeaseNodeOnly are the series a node-heartbeat Lease has only with
// --metrics.node-heartbeats=per-lease: a panel selecting them with class="node-heartbeat"
// shows "No data" to everyone running the default summary. Use lease_class_locks,
// lease_class_renew_age_seconds and lease_overdue_observed_renew_timestamp_seconds.
var perLeaseNodeOnly = map[string]bool{
	"lease_held":                             true,
	"lease_observed_renew_timestamp_seconds": true,
}

// histogramSuffixes are the series a documented histogram is exposed as.
var histogramSuffixes = []string{"_bucket", "_sum", "_count"}

// Metrics Prometheus itself attaches to every scrape target.
var scrapeMetrics = map[string]bool{"up": true, "scrape_duration_seconds": true}

// client_golang's Go and process collectors (documented in metrics.md as a
// family, not by name) belong on the exporter's own health dashboard only.
const runtimeDashboard = "exporter-health.json"

func (c *Contract) allowed(name, file string) bool {
	if c.names[name] || scrapeMetrics[name] {
		return true
	}
	for _, suffix := range histogramSuffixes {
		if base, ok := strings.CutSuffix(name, suffix); ok && c.histograms[base] {
			return true
		}
	}
	isRuntime := strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_")
	return isRuntime && file == runtimeDashboard
}

var promParser = parser.NewParser(parser.Options{})

// Check substitutes q's variables, parses the result and checks every metric
// it selects. Panel queries must also scope every selector by job and
// cluster, or a Prometheus that scrapes two exporters (or two clusters)
// would mix their series.
func (c *Contract) Check(q Query, vars Vars) []error {
	expr, err := vars.Substitute(q.Expr)
	if err != nil {
		return []error{fmt.Errorf("%s: %w", q.where(), err)}
	}
	if q.Variable != "" {
		sel, ok := labelValuesSelector(expr)
		if !ok {
			return nil // e.g. a variable that lists metric names: nothing to check
		}
		expr = sel
	}
	node, err := promParser.ParseExpr(expr)
	if err != nil {
		return []error{fmt.Errorf("%s: does not parse: %v\n    query: %s", q.where(), err, oneLine(expr))}
	}
	var errs []error
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := metricName(vs)
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("%s: selector %s has no fixed metric name, so it cannot be checked against docs/metrics.md", q.where(), vs))
		case extendedOnly[name]:
			errs = append(errs, fmt.Errorf("%s: metric %q is exported only with --metrics.extended; build the panel on the default set", q.where(), name))
		case perLeaseNodeOnly[name] && selectsNodeHeartbeats(vs):
			errs = append(errs, fmt.Errorf("%s: metric %q is exported for node heartbeats only with --metrics.node-heartbeats=per-lease; build the panel on lease_class_locks, lease_class_renew_age_seconds or lease_overdue_observed_renew_timestamp_seconds", q.where(), name))
		case !c.allowed(name, q.File):
			errs = append(errs, fmt.Errorf("%s: metric %q is not documented in docs/metrics.md (nor up, scrape_duration_seconds, or go_*/process_* on %s)", q.where(), name, runtimeDashboard))
		}
		if q.Variable == "" {
			for _, l := range []string{"job", "cluster"} {
				if !hasMatcher(vs, l) {
					errs = append(errs, fmt.Errorf("%s: selector %s lacks a %s matcher (use %s=~\"$%s\")", q.where(), vs, l, l, l))
				}
			}
		}
		return nil
	})
	return errs
}

func metricName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

func hasMatcher(vs *parser.VectorSelector, name string) bool {
	for _, m := range vs.LabelMatchers {
		if m.Name == name {
			return true
		}
	}
	return false
}

// label_values(selector, label) -> selector. label_values(label) has no
// selector and nothing to check.
var labelValues = regexp.MustCompile(`^\s*label_values\(\s*(.+)\s*,\s*\w+\s*\)\s*$`)

func labelValuesSelector(q string) (string, bool) {
	m := labelValues.FindStringSubmatch(q)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// selectsNodeHeartbeats reports whether vs selects only node-heartbeat locks: by class, or by
// their namespace.
func selectsNodeHeartbeats(vs *parser.VectorSelector) bool {
	for _, m := range vs.LabelMatchers {
		if m.Type != labels.MatchEqual {
			continue
		}
		if m.Name == "class" && m.Value == "node-heartbeat" || m.Name == "namespace" && m.Value == "kube-node-lease" {
			return true
		}
	}
	return false
}
