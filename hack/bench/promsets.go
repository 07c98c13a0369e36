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

// leanLeaderElection is the contract's lean default for leader-election and
// apiserver-identity locks with today's family names; lease_renew_timestamp_seconds stands in
// for the future lease_holder_clock_skew_seconds (one float per lock, changing on renewals).
const leanLeaderElection = "lease_(info|held|observed_renew_timestamp_seconds|acquire_timestamp_seconds|duration_seconds|observed_holder_changes_total|renew_timestamp_seconds)"

// selfMetrics are the exporter's own series, kept by every set cut from its exposition.
const selfMetrics = "(lease_exporter_|go_|process_|promhttp_).*"

var (
	leanSource = []string{"class", "__name__"}
	leanRegex  = "node-heartbeat;lease_(held|observed_renew_timestamp_seconds)" +
		"|(leader-election|apiserver-identity);" + leanLeaderElection +
		"|[^;]*;" + selfMetrics
	ksmSimRegex = "lease_(info|renew_timestamp_seconds)|" + selfMetrics
)

var candidates = []candidate{
	{name: "full", desc: "the current full exposition, unfiltered"},
	{name: "lean", desc: "the lean default of the issue-18 contract, today's names, served by the filtering proxy",
		source: leanSource, regex: leanRegex},
	{name: "lean-relabel", desc: "the same, cut from the full scrape by metric_relabel_configs",
		source: leanSource, regex: leanRegex, relabel: true},
	{name: "ksm", desc: "real kube-state-metrics --resources=leases: kube_lease_owner and kube_lease_renew_time", ksm: true},
	{name: "ksm-sim", desc: "kube-state-metrics' two series per Lease cut from the exporter (lease_info, lease_renew_timestamp_seconds; self-metrics kept), served by the proxy",
		source: []string{"__name__"}, regex: ksmSimRegex},
	{name: "ksm-sim-relabel", desc: "the same, cut by metric_relabel_configs",
		source: []string{"__name__"}, regex: ksmSimRegex, relabel: true},
}

// parseSets resolves -prometheus-sets.
func parseSets(s string) ([]candidate, error) {
	var out []candidate
	for _, name := range strings.Split(s, ",") {
		i := slices.IndexFunc(candidates, func(c candidate) bool { return c.name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("unknown metric set %q (have full, lean, lean-relabel, ksm, ksm-sim, ksm-sim-relabel)", name)
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
