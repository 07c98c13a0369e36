package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const repoRoot = "../.."

func render(t *testing.T, override string) *Rendering {
	t.Helper()
	r, err := Render(filepath.Join(repoRoot, "mixin"), override)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCommittedRenderingIsCurrent: every file the default rendering ships (the rule file, the
// PrometheusRule, dashboards/ and the copies inside the chart and the Kustomize component) is
// the mixin's rendering with the default _config, byte for byte, and no dashboards directory
// holds a dashboard the mixin does not render.
func TestCommittedRenderingIsCurrent(t *testing.T) {
	const fix = "edit mixin/, not the rendering, and run `make generate`"
	want := ShippedFiles(render(t, ""))
	for rel, b := range want {
		got, err := os.ReadFile(filepath.Join(repoRoot, rel))
		if err != nil {
			t.Errorf("%v: %s", err, fix)
			continue
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s differs from the mixin's rendering: %s\n%s", rel, fix, firstDiff(got, b))
		}
	}
	for _, dir := range allDashboardDirs() {
		have, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*.json"))
		for _, p := range have {
			if _, ok := want[filepath.Join(dir, filepath.Base(p))]; !ok {
				t.Errorf("%s/%s is not rendered by the mixin: %s", dir, filepath.Base(p), fix)
			}
		}
	}
}

// TestDefaultDashboardsAreTheirSources: with the defaults the mixin changes nothing in a
// source dashboard, so what Grafana exported is what users import. Only the key order
// differs: the rendering has jsonnet's, sorted.
func TestDefaultDashboardsAreTheirSources(t *testing.T) {
	r := render(t, "")
	srcs, _ := filepath.Glob(filepath.Join(repoRoot, "mixin", "dashboards", "*.json"))
	var names []string
	for _, p := range srcs {
		names = append(names, filepath.Base(p))
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(src, &a); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := json.Unmarshal(r.Dashboards[filepath.Base(p)], &b); err != nil {
			t.Fatalf("rendered %s: %v", filepath.Base(p), err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s renders differently from its source with the default _config", filepath.Base(p))
		}
	}
	if !slices.Equal(names, r.DashboardNames()) {
		t.Errorf("default dashboards %v, sources %v", r.DashboardNames(), names)
	}
}

// TestPrometheusRuleCarriesTheAlerts: the PrometheusRule Kustomize and Helm ship holds the
// rule file's groups, unchanged, under the name and label the chart and the docs use.
func TestPrometheusRuleCarriesTheAlerts(t *testing.T) {
	r := render(t, "")
	var pr PrometheusRule
	if err := yaml.Unmarshal(r.PrometheusRule, &pr); err != nil {
		t.Fatal(err)
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || pr.Metadata.Name != "lease-exporter" {
		t.Errorf("got %s %s %s, want monitoring.coreos.com/v1 PrometheusRule lease-exporter", pr.APIVersion, pr.Kind, pr.Metadata.Name)
	}
	var rf RuleFile
	if err := yaml.Unmarshal(r.Alerts, &rf); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pr.Spec, rf) || len(rf.Groups) == 0 {
		t.Error("the PrometheusRule's spec.groups differ from the rule file's groups")
	}
}

// TestExemptionsAreRecordedFirst: _config.exemptions become lease_exporter:alert_exempt
// recordings at the head of the per-lease group, so they exist at the first evaluation of
// every alert that reads them (mixin/tests/exemptions.yml feeds the alerts those series), and
// an exempt Lease stays quiet while the same name elsewhere pages.
func TestExemptionsAreRecordedFirst(t *testing.T) {
	r := render(t, `{ exemptions: [{ namespace: 'batch', lease: 'nightly-report' },
	                               { namespace: 'team-a', lease: 'flappy', alert: 'LeaseFrequentTransitions' }] }`)
	var rf RuleFile
	if err := yaml.Unmarshal(r.Alerts, &rf); err != nil {
		t.Fatal(err)
	}
	head := rf.Groups[0].Rules
	want := []Rule{
		{Record: "lease_exporter:alert_exempt", Expr: "vector(1)", Labels: map[string]string{"namespace": "batch", "lease": "nightly-report"}},
		{Record: "lease_exporter:alert_exempt", Expr: "vector(1)", Labels: map[string]string{"namespace": "team-a", "lease": "flappy", "alert": "LeaseFrequentTransitions"}},
	}
	if rf.Groups[0].Name != "lease-exporter.leases" || len(head) < 2 || !reflect.DeepEqual(head[:2], want) {
		t.Fatalf("group %s starts with %+v, want the two exemptions %+v", rf.Groups[0].Name, head[:min(2, len(head))], want)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "alerts.yaml"), r.Alerts, 0o644); err != nil {
		t.Fatal(err)
	}
	suite := `rule_files: [alerts.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: lease_held{job="lease-exporter",instance="a:8080",pod="le-a",namespace="batch",lease="nightly-report",class="leader-election"}
        values: 0x10
      - series: lease_held{job="lease-exporter",instance="a:8080",pod="le-a",namespace="team-a",lease="nightly-report",class="leader-election"}
        values: 0x10
      - series: lease_exporter_watch_up{job="lease-exporter",instance="a:8080",pod="le-a"}
        values: 1x10
      - series: lease_exporter_cache_synced{job="lease-exporter",instance="a:8080",pod="le-a"}
        values: 1x10
    promql_expr_test:
      - expr: count(lease_exporter:alert_exempt)
        eval_time: 0m
        exp_samples: [{labels: "{}", value: 2}]
      - expr: ALERTS{alertname="LeaseNoLeader", alertstate="firing"}
        eval_time: 5m
        exp_samples:
          - labels: 'ALERTS{alertname="LeaseNoLeader", alertstate="firing", class="leader-election", job="lease-exporter", lease="nightly-report", namespace="team-a", severity="critical"}'
            value: 1
`
	if err := os.WriteFile(filepath.Join(dir, "suite.yml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtoolPath(t), "test", "rules", filepath.Join(dir, "suite.yml")).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules on the rendering with exemptions: %v\n%s", err, out)
	}
}

// TestRenderingFollowsConfig: the knobs reach the rendering (a mixin whose _config were
// ignored would still pass the drift test).
func TestRenderingFollowsConfig(t *testing.T) {
	r := render(t, `{
		exporterSelector: 'job="monitoring/leases"',
		runbookURLPattern: 'https://runbooks.example/%s',
		alerts+: { LeaseNoLeader+: { 'for': '7m' }, LeaseFrequentTransitions+: { window: '30m', minChanges: 11 } },
		exemptions: [{ namespace: 'batch', lease: 'nightly', alert: 'LeaseNoLeader' }],
		dashboardRefresh: '1m',
		dashboardSelector: 'job="monitoring/leases"',
	}`)
	alerts := string(r.Alerts)
	for _, want := range []string{
		`lease_held{job="monitoring/leases", class="leader-election"}`,
		"runbook_url: https://runbooks.example/LeaseNoLeader",
		"for: 7m",
		`[30m]`, ">= 11", "in the last 30 minutes",
		"record: lease_exporter:alert_exempt",
	} {
		if !strings.Contains(alerts, want) {
			t.Errorf("rendered alerts lack %q", want)
		}
	}
	if strings.Contains(alerts, "lease-exporter.*") {
		t.Error("the default selector survives a changed exporterSelector")
	}
	d := string(r.Dashboards["leases-overview.json"])
	for _, want := range []string{`"refresh": "1m"`, `label_values(lease_exporter_build_info{job=\"monitoring/leases\"}, job)`} {
		if !strings.Contains(d, want) {
			t.Errorf("rendered leases-overview lacks %s", want)
		}
	}
}

// TestBadConfigFails: a mistake in _config is an error naming it, not a silent no-op.
func TestBadConfigFails(t *testing.T) {
	for override, want := range map[string]string{
		`{ exemptions: [{ namespace: 'a', lease: 'b', alert: 'LeaseExporterDown' }] }`: "not a per-lease alert",
		`{ alerts+: { LeaseNoLeader+: { 'for': '2x' } } }`:                             "for",
		`{ dashboardTimeFrom: {} }`:                                                    "Field does not exist",
		`{ alerts+: { LeaseNoLeaders+: { 'for': '5m' } } }`:                            "not an alert of this mixin",
		`{ exporterSelector: 'lease-exporter' }`:                                       "does not parse",
		`{ replicaLabels: ['instance', 'pod name'] }`:                                  "does not parse",
	} {
		_, err := Render(filepath.Join(repoRoot, "mixin"), override)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got error %v, want one mentioning %q", override, err, want)
		}
	}
}

// promtoolPath is Debian's promtool: missing, it fails the test (a skipped rule test reads
// as green while the rules go untested).
func promtoolPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not on PATH: run hack/deps.sh (it installs Debian's prometheus)")
	}
	return p
}

// firstDiff shows the first differing line, enough to see what drifted.
func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n  committed: " + al[i] + "\n  rendered:  " + bl[i]
		}
	}
	return "one is a prefix of the other (" + strconv.Itoa(len(al)) + " vs " + strconv.Itoa(len(bl)) + " lines)"
}
