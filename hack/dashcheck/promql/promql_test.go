package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The repository's dashboards and metric contract, unless check.sh (or a
// caller) points elsewhere.
func dashboardsDir() string { return envOr("DASHCHECK_DASHBOARDS", "../../../dashboards") }
func metricsDoc() string    { return envOr("DASHCHECK_METRICS", "../../../docs/metrics.md") }

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func loadContract(t *testing.T) *Contract {
	t.Helper()
	c, err := LoadContract(metricsDoc())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkDir runs the contract over every query of every dashboard in dir.
func checkDir(t *testing.T, c *Contract, dir string) (errs []string, n int) {
	t.Helper()
	dashboards, names, err := loadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		for _, q := range dashboards[name].queries(name) {
			n++
			for _, err := range c.Check(q, DefaultVars()) {
				errs = append(errs, err.Error())
			}
		}
	}
	return errs, n
}

func TestDashboardsUseDocumentedMetrics(t *testing.T) {
	errs, n := checkDir(t, loadContract(t), dashboardsDir())
	for _, e := range errs {
		t.Error(e)
	}
	if n == 0 {
		t.Fatal("no queries found: is the dashboards directory right?")
	}
	if len(errs) == 0 {
		t.Logf("%d queries parse and use only documented metrics", n)
	}
}

// Renaming a metric in the contract (as a rename in the exporter forces, via
// its docs test) must break the dashboards that still use the old name.
func TestRenamedMetricInContractBreaksDashboards(t *testing.T) {
	doc, err := os.ReadFile(metricsDoc())
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.Replace(string(doc), "\n### lease_held\n", "\n### lease_valid\n", 1)
	if renamed == string(doc) {
		t.Fatal("docs/metrics.md has no `### lease_held` heading to rename")
	}
	path := filepath.Join(t.TempDir(), "metrics.md")
	if err := os.WriteFile(path, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadContract(path)
	if err != nil {
		t.Fatal(err)
	}
	errs, _ := checkDir(t, c, dashboardsDir())
	if !anyContains(errs, `metric "lease_held" is not documented`) {
		t.Fatalf("renaming lease_held in the contract did not fail the dashboards; errors: %q", errs)
	}
}

func TestRejects(t *testing.T) {
	c := loadContract(t)
	sel := `{job=~"$job", cluster=~"$cluster"}`
	cases := []struct {
		name, file, expr, want string
	}{
		{"bogus metric", "leases-overview.json", `max(lease_renew_age_secondz` + sel + `)`, `metric "lease_renew_age_secondz" is not documented`},
		{"bogus metric in a matrix", "leases-overview.json", `rate(lease_transition_total` + sel[:len(sel)-1] + `}[$__rate_interval])`, `metric "lease_transition_total"`},
		{"extended-only metric", "lease-detail.json", `max(lease_renew_age_seconds` + sel + `)`, `"lease_renew_age_seconds" is exported only with --metrics.extended`},
		{"per-lease node series", "node-heartbeats.json", `max(lease_held{class="node-heartbeat", job=~"$job", cluster=~"$cluster"})`, `"lease_held" is exported for node heartbeats only with --metrics.node-heartbeats=per-lease`},
		{"per-lease node series by namespace", "node-heartbeats.json", `max(lease_observed_renew_timestamp_seconds{namespace="kube-node-lease", job=~"$job", cluster=~"$cluster"})`, `"lease_observed_renew_timestamp_seconds" is exported for node heartbeats only with --metrics.node-heartbeats=per-lease`},
		{"suffix of a gauge", "node-heartbeats.json", `lease_class_locks_bucket` + sel, `metric "lease_class_locks_bucket" is not documented`},
		{"runtime metric outside exporter health", "leases-overview.json", `go_goroutines` + sel, `metric "go_goroutines" is not documented`},
		{"unknown variable", "lease-detail.json", `lease_info{job=~"$job", cluster=~"$cluster", namespace="$namesapce"}`, "unknown template variable(s) $namesapce"},
		{"syntax error", "leases-overview.json", `sum by (lease (lease_info` + sel + `)`, "does not parse"},
		{"selector without job", "leases-overview.json", `lease_info{cluster=~"$cluster"}`, "lacks a job matcher"},
		{"selector without cluster", "leases-overview.json", `lease_info{job=~"$job"}`, "lacks a cluster matcher"},
		{"regex metric name", "leases-overview.json", `{__name__=~"lease_.*", job=~"$job", cluster=~"$cluster"}`, "no fixed metric name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := c.Check(Query{File: tc.file, Panel: "p", RefID: "A", Expr: tc.expr}, DefaultVars())
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if !anyContains(msgs, tc.want) {
				t.Fatalf("want an error containing %q, got %q", tc.want, msgs)
			}
		})
	}
}

func TestAccepts(t *testing.T) {
	c := loadContract(t)
	for _, q := range []Query{
		{File: "exporter-health.json", Panel: "p", Expr: `rate(process_cpu_seconds_total{job=~"$job", cluster=~"$cluster"}[$__rate_interval])`},
		{File: "leases-overview.json", Panel: "p", Expr: `up{job=~"$job", cluster=~"$cluster"}`},
		{File: "leases-overview.json", Variable: "job", Expr: `label_values(lease_exporter_build_info, job)`},
	} {
		if errs := c.Check(q, DefaultVars()); len(errs) > 0 {
			t.Errorf("%s: unexpected errors %v", q.Expr, errs)
		}
	}
	if c.names["Go"] || !c.names["lease_info"] || !c.names["lease_exporter_watch_up"] {
		t.Errorf("contract parsed wrongly: %v", c.names)
	}
}

func TestSubstitute(t *testing.T) {
	v := Vars{"job": "j", "cluster": ".*", "__rate_interval": "1m"}
	got, err := v.Substitute(`x{job=~"$job",c=~"${cluster:regex}",d="[[job]]"}[$__rate_interval] "$1"`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `x{job=~"j",c=~".*",d="j"}[1m] "$1"`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if _, err := v.Substitute("$nope"); err == nil {
		t.Fatal("unknown variable accepted")
	}
}

// The -list output is the interface of the end-to-end test: one JSON object
// per panel query, fully substituted.
func TestListOutput(t *testing.T) {
	vars := DefaultVars()
	_ = vars.Set("namespace=kube-node-lease")
	var buf bytes.Buffer
	if err := list(&buf, dashboardsDir(), vars); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var q map[string]any
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("line %d is not JSON: %v", n+1, err)
		}
		for _, k := range []string{"file", "panel", "refId", "expr"} {
			if s, _ := q[k].(string); s == "" {
				t.Errorf("line %d: empty %q in %s", n+1, k, sc.Text())
			}
		}
		expr := q["expr"].(string)
		if strings.Contains(strings.ReplaceAll(expr, "$1", ""), "$") || strings.Contains(expr, `namespace="kube-system"`) {
			t.Errorf("line %d: not substituted with the given values: %s", n+1, expr)
		}
		n++
	}
	if n == 0 {
		t.Fatal("-list printed nothing")
	}
}

func anyContains(msgs []string, want string) bool {
	for _, m := range msgs {
		if strings.Contains(m, want) {
			return true
		}
	}
	return false
}
