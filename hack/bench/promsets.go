package main

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// candidate is one metric set whose cost in a user's Prometheus the -prometheus mode
// measures. A set cut from the exporter's exposition by a keep rule simulates a leaner
// exporter in one of two ways. By default a filtering proxy in the bench (filter.go) serves
// Prometheus only the kept lines, so Prometheus parses and caches what such an exporter
// would send. With relabel, Prometheus scrapes the full exposition and drops the rest by
// metric_relabel_configs, as a user would today; it then still parses every line and its
// scrape cache remembers every dropped series, which the -relabel sets measure.
type candidate struct {
	name, desc string
	ksm        bool     // scrape kube-state-metrics instead of the exporter
	source     []string // source_labels of the keep rule; nil keeps everything
	regex      string   // matched, anchored, against the source label values joined by ";"
	relabel    bool     // cut by metric_relabel_configs instead of the proxy
}

// The -prometheus exporter runs with --metrics.node-heartbeats=per-lease (promExporterArgs),
// the widest default-flag exposition: per-lock series for every lock, node heartbeats
// included, and the class summary. Every other set is cut from it, so all of them see the
// same scrape of the same cache at the same moment.
var promExporterArgs = []string{"--metrics.node-heartbeats=per-lease"}

// The keep rules match "class;__name__"; the exporter's own series, which have no class
// label or a class on lease_exporter_leases, are kept by every set cut from it.
var (
	classAndName = []string{"class", "__name__"}
	otherClasses = "(leader-election|apiserver-identity);.*|;.*|node-heartbeat;lease_exporter_.*"
	// summaryRegex keeps what the default (--metrics.node-heartbeats=summary) sends: of node
	// heartbeats only the overdue ones' series and the class summary.
	summaryRegex = "node-heartbeat;lease_(class_.*|overdue_observed_renew_timestamp_seconds)|" + otherClasses
	// oneSeriesRegex keeps one series per node heartbeat, its observed renew time ("held" is
	// then judged in PromQL), and nothing else of the class.
	oneSeriesRegex = "node-heartbeat;lease_observed_renew_timestamp_seconds|" + otherClasses
)

var candidates = []candidate{
	{name: "per-lease", desc: "--metrics.node-heartbeats=per-lease, unfiltered: lease_held and lease_observed_renew_timestamp_seconds for every node heartbeat (the default before issue 24), plus the class summary"},
	{name: "one-series", desc: "one series per node heartbeat (its observed renew time), served by the filtering proxy",
		source: classAndName, regex: oneSeriesRegex},
	{name: "summary", desc: "the default, --metrics.node-heartbeats=summary: class counts and renew-age histogram, a series per node only while overdue, served by the filtering proxy",
		source: classAndName, regex: summaryRegex},
	{name: "summary-relabel", desc: "the same, cut from the per-lease scrape by metric_relabel_configs",
		source: classAndName, regex: summaryRegex, relabel: true},
	{name: "ksm", desc: "real kube-state-metrics --resources=leases: kube_lease_owner and kube_lease_renew_time", ksm: true},
}

// parseSets resolves -prometheus-sets.
func parseSets(s string) ([]candidate, error) {
	var out []candidate
	for _, name := range strings.Split(s, ",") {
		i := slices.IndexFunc(candidates, func(c candidate) bool { return c.name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("unknown metric set %q (have per-lease, one-series, summary, summary-relabel, ksm)", name)
		}
		out = append(out, candidates[i])
	}
	return out, nil
}

// relabelConfigs is the set's metric_relabel_configs as a YAML flow sequence ("" keeps all).
func (c candidate) relabelConfigs() string {
	if c.source == nil || !c.relabel {
		return ""
	}
	return fmt.Sprintf(`[{source_labels: [%s], regex: %q, action: keep}]`, strings.Join(c.source, ", "), c.regex)
}

// keeper returns the set's keep rule as Prometheus applies it: the regex anchored at both
// ends (Prometheus' relabel.NewRegexp), matched against the source values joined by ";".
func (c candidate) keeper() func(line []byte) bool {
	if c.source == nil {
		return func([]byte) bool { return true }
	}
	re := regexp.MustCompile("^(?:" + c.regex + ")$")
	return func(line []byte) bool {
		vals := make([]string, len(c.source))
		for i, l := range c.source {
			vals[i] = labelValue(line, l)
		}
		return re.MatchString(strings.Join(vals, ";"))
	}
}

// exposition is what a set keeps of one scrape: series, and the bytes of their series
// identifiers (`name{label="value",...}`, the key of Prometheus' scrape cache and roughly what
// the head stores per series in labels, before the job and instance labels it adds).
type exposition struct {
	Series     int
	LabelBytes int
}

// account counts what keep keeps of a text exposition.
func account(body []byte, keep func([]byte) bool) exposition {
	var e exposition
	for line := range bytes.Lines(body) {
		if len(line) == 0 || line[0] == '#' || line[0] == '\n' {
			continue
		}
		if !keep(line) {
			continue
		}
		e.Series++
		e.LabelBytes += len(seriesID(line))
	}
	return e
}

// seriesID is the sample line without its value (and timestamp, none here).
func seriesID(line []byte) []byte {
	if i := bytes.LastIndexByte(line, '}'); i >= 0 {
		return line[:i+1]
	}
	if i := bytes.IndexByte(line, ' '); i >= 0 {
		return line[:i]
	}
	return line
}

// labelValue returns the value of label name in a sample line, "" if absent; __name__ is
// the metric name. Escaped quotes inside values are skipped over, not unescaped.
func labelValue(line []byte, name string) string {
	open := bytes.IndexByte(line, '{')
	if name == "__name__" {
		if open < 0 {
			return string(seriesID(line))
		}
		return string(line[:open])
	}
	if open < 0 {
		return ""
	}
	rest := line[open+1:]
	for len(rest) > 0 && rest[0] != '}' {
		eq := bytes.IndexByte(rest, '=')
		if eq < 0 || eq+1 >= len(rest) || rest[eq+1] != '"' {
			return ""
		}
		key := rest[:eq]
		v := rest[eq+2:]
		end := 0
		for end < len(v) && v[end] != '"' {
			if v[end] == '\\' {
				end++
			}
			end++
		}
		if string(key) == name {
			return string(v[:min(end, len(v))])
		}
		rest = v[min(end+1, len(v)):]
		rest = bytes.TrimPrefix(rest, []byte(","))
	}
	return ""
}
