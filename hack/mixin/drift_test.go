package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
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

// TestCommittedRenderingIsCurrent: alerts/lease-exporter.rules.yml and dashboards/*.json are
// the mixin's rendering with the default _config, byte for byte, and dashboards/ holds no
// dashboard the mixin does not render. (The PrometheusRule and the deploy copies derive from
// these; alerts/generate_test.go and test/deploy hold them to that.)
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
	have, _ := filepath.Glob(filepath.Join(repoRoot, "dashboards", "*.json"))
	for _, p := range have {
		if _, ok := want[filepath.Join("dashboards", filepath.Base(p))]; !ok {
			t.Errorf("dashboards/%s is not rendered by the mixin: %s", filepath.Base(p), fix)
		}
	}
}

// TestDefaultDashboardsAreTheirSources: with the defaults the mixin changes nothing in a
// source dashboard, so what Grafana exported is what users import, in the same key order.
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
		if !bytes.Equal(src, r.Dashboards[filepath.Base(p)]) {
			t.Errorf("%s renders differently from its source with the default _config:\n%s", filepath.Base(p), firstDiff(src, r.Dashboards[filepath.Base(p)]))
		}
	}
	if !slices.Equal(names, r.DashboardNames()) {
		t.Errorf("default dashboards %v, sources %v", r.DashboardNames(), names)
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
	} {
		_, err := Render(filepath.Join(repoRoot, "mixin"), override)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got error %v, want one mentioning %q", override, err, want)
		}
	}
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
