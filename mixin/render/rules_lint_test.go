package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// documentedMetrics returns the ### headings of docs/metrics.md, the metric contract.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(repoRoot + "/docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	// A histogram's heading names the family; queries read its _bucket, _sum and _count.
	for _, h := range regexp.MustCompile(`(?m)^### ([a-z_]+)\n(Histogram)?`).FindAllStringSubmatch(string(b), -1) {
		m[h[1]] = true
		if h[2] != "" {
			m[h[1]+"_bucket"], m[h[1]+"_sum"], m[h[1]+"_count"] = true, true, true
		}
	}
	if len(m) < 10 {
		t.Fatalf("docs/metrics.md: found only %d metric headings", len(m))
	}
	return m
}

var (
	// Identifiers that look like our metric names; recording-rule names contain ':'.
	metricTokenRE = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	// A selector of a metric: name{...}.
	selectorRE = regexp.MustCompile(`\b(lease_[a-z_]+|up)\{([^}]*)\}`)
)

func ourMetricTokens(s string) []string {
	var out []string
	for _, tok := range metricTokenRE.FindAllString(s, -1) {
		if strings.HasPrefix(tok, "lease_") && !strings.Contains(tok, ":") {
			out = append(out, tok)
		}
	}
	return out
}

// TestRulesUseOnlyContractMetrics: a misspelt or renamed metric makes a rule silently
// match nothing, which no promtool syntax check notices.
func TestRulesUseOnlyContractMetrics(t *testing.T) {
	documented := documentedMetrics(t)
	for _, r := range sourceRules(t) {
		text := r.Expr
		for _, a := range r.Annotations {
			text += " " + a
		}
		for _, tok := range ourMetricTokens(text) {
			if !documented[tok] {
				t.Errorf("%s%s uses %s, which docs/metrics.md does not document", r.Alert, r.Record, tok)
			}
		}
	}
}

// extendedOnly are the series only --metrics.extended exports (docs/metrics.md, the lean
// default of issue 18). The rules and the runbooks' queries must work without them.
var extendedOnly = map[string]bool{
	"lease_renew_age_seconds":        true,
	"lease_expiry_timestamp_seconds": true,
	"lease_renew_timestamp_seconds":  true,
	"lease_transitions_total":        true,
}

// TestRulesUseOnlyDefaultMetrics: a rule on an opt-in series silently never fires for
// everyone running the defaults.
func TestRulesUseOnlyDefaultMetrics(t *testing.T) {
	for _, r := range sourceRules(t) {
		text := r.Expr
		for _, a := range r.Annotations {
			text += " " + a
		}
		for _, tok := range ourMetricTokens(text) {
			if extendedOnly[tok] {
				t.Errorf("%s%s uses %s, which only --metrics.extended exports", r.Alert, r.Record, tok)
			}
		}
	}
}

// TestEverySelectorHasTheJobMatcher keeps exporterSelector complete: a selector without the
// matcher would ignore the user's _config and pick up another job's series.
func TestEverySelectorHasTheJobMatcher(t *testing.T) {
	for _, r := range sourceRules(t) {
		if r.Alert == "" {
			continue
		}
		names := len(ourMetricTokens(r.Expr)) + len(regexp.MustCompile(`\bup\b`).FindAllString(r.Expr, -1))
		sels := selectorRE.FindAllStringSubmatch(r.Expr, -1)
		if len(sels) != names {
			t.Errorf("%s: %d metric names but %d name{...} selectors; write every metric as name{%s, ...}", r.Alert, names, len(sels), defaultJobSelector)
		}
		for _, s := range sels {
			if !strings.HasPrefix(s[2], defaultJobSelector) {
				t.Errorf("%s: selector %s does not start with %s", r.Alert, s[0], defaultJobSelector)
			}
		}
	}
}

// withRecordings appends to expr the expressions of the recording rules it reads, and theirs:
// an alert that reads a recording aggregates exporter replicas away where that is recorded.
func withRecordings(expr string, records map[string]string) string {
	seen := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for name, e := range records {
			if !seen[name] && strings.Contains(expr, name) {
				seen[name], changed = true, true
				expr += "\n" + e
			}
		}
	}
	return expr
}

var sectionRE = regexp.MustCompile(`(?m)^## (Meaning|Impact|Diagnosis|Mitigation)$`)

// TestAlertsAreComplete checks what on-call relies on: a severity, the three annotations,
// a runbook_url pointing at an existing runbook with the four sections, a docs entry, and
// for per-lease alerts HA de-duplication and the exemption hook.
func TestAlertsAreComplete(t *testing.T) {
	docs, err := os.ReadFile(repoRoot + "/docs/alerts.md")
	if err != nil {
		t.Fatal(err)
	}
	records := map[string]string{}
	for _, r := range sourceRules(t) {
		if r.Record != "" {
			records[r.Record] = r.Expr
		}
	}
	// Per-lease alerts are those of the leases group; the exporter's own alerts may name a
	// namespace too (the exporter's, LeaseExporterNoFreshReplica's deployment).
	var rf ruleFile
	if err := yaml.Unmarshal(readSource(t), &rf); err != nil {
		t.Fatal(err)
	}
	perLease := map[string]bool{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			perLease[r.Alert] = g.Name == "lease-exporter.leases"
		}
	}
	for _, r := range sourceRules(t) {
		if r.Alert == "" {
			continue
		}
		if s := r.Labels["severity"]; s != "critical" && s != "warning" {
			t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
		}
		for _, a := range []string{"summary", "description", "runbook_url"} {
			if strings.TrimSpace(r.Annotations[a]) == "" {
				t.Errorf("%s: annotation %s missing", r.Alert, a)
			}
		}
		if want := defaultRunbookBaseURL + r.Alert + ".md"; r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		runbook, err := os.ReadFile(filepath.Join(repoRoot+"/docs/runbooks", r.Alert+".md"))
		if err != nil {
			t.Errorf("%s: %v", r.Alert, err)
		} else if n := len(sectionRE.FindAll(runbook, -1)); n != 4 {
			t.Errorf("%s: runbook has %d of the sections Meaning, Impact, Diagnosis, Mitigation", r.Alert, n)
		}
		if !strings.Contains(string(docs), "`"+r.Alert+"`") {
			t.Errorf("%s: not described in docs/alerts.md", r.Alert)
		}
		if perLease[r.Alert] {
			if !strings.Contains(withRecordings(r.Expr, records), defaultReplicaLabels) {
				t.Errorf("%s: per-lease alert without %q: one alert per exporter replica", r.Alert, defaultReplicaLabels)
			}
			if hook := exemptMetric + `{alert=~"|` + r.Alert + `"}`; !strings.Contains(r.Expr, "unless on (namespace, lease)") || !strings.Contains(r.Expr, hook) {
				t.Errorf("%s: per-lease alert without the exemption hook unless on (namespace, lease) %s", r.Alert, hook)
			}
		}
	}
}

// TestDocsUseContractMetricsAndAnchors: runbook queries are copied into consoles under
// pressure; a wrong metric name, an opt-in series or a dead link there costs time.
func TestDocsUseContractMetricsAndAnchors(t *testing.T) {
	documented := documentedMetrics(t)
	files, _ := filepath.Glob(repoRoot + "/docs/runbooks/*.md")
	files = append(files, repoRoot+"/docs/alerts.md")
	headings := map[string]map[string]bool{}
	slug := func(h string) string {
		h = strings.ToLower(strings.TrimSpace(h))
		h = regexp.MustCompile(`[^a-z0-9 -]`).ReplaceAllString(h, "")
		return strings.ReplaceAll(h, " ", "-")
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, f := range files {
		headings[filepath.Base(f)] = map[string]bool{}
		for _, h := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(read(f), -1) {
			headings[filepath.Base(f)][slug(h[1])] = true
		}
	}
	promqlBlock := regexp.MustCompile("(?s)```promql\n(.*?)```")
	for _, f := range files {
		text := read(f)
		for _, tok := range ourMetricTokens(text) {
			if !documented[tok] {
				t.Errorf("%s mentions %s, which docs/metrics.md does not document", f, tok)
			}
		}
		// Prose may point at an extended series; a query to copy must run on the defaults.
		for _, b := range promqlBlock.FindAllStringSubmatch(text, -1) {
			for _, tok := range ourMetricTokens(b[1]) {
				if extendedOnly[tok] {
					t.Errorf("%s: a promql block queries %s, which only --metrics.extended exports", f, tok)
				}
			}
		}
		for _, l := range regexp.MustCompile(`\]\(([^)#]*\.md)?#([^)]+)\)`).FindAllStringSubmatch(text, -1) {
			target := filepath.Base(l[1])
			if l[1] == "" {
				target = filepath.Base(f)
			}
			if hs, ok := headings[target]; ok && !hs[l[2]] {
				t.Errorf("%s links to %s#%s, which has no such heading", f, target, l[2])
			}
		}
	}
}
