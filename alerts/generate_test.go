package alerts

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const source = "lease-exporter.rules.yml"

func readSource(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// generateLines returns the generator invocations of generate.go's //go:generate lines,
// which run in this directory: the drift test replays exactly what `go generate` runs.
func generateLines(t *testing.T) []Config {
	t.Helper()
	b, err := os.ReadFile("generate.go")
	if err != nil {
		t.Fatal(err)
	}
	var cs []Config
	for _, line := range strings.Split(string(b), "\n") {
		args, ok := strings.CutPrefix(line, "//go:generate go run ./cmd/gen ")
		if !ok {
			continue
		}
		c, err := ParseArgs(strings.Fields(args), io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		t.Fatal("generate.go has no //go:generate go run ./cmd/gen lines")
	}
	return cs
}

// TestGeneratedFilesUpToDate is the drift test: the committed PrometheusRule (and the
// exemption test fixture) must be byte for byte what the generator makes of the source.
func TestGeneratedFilesUpToDate(t *testing.T) {
	for _, c := range generateLines(t) {
		src, err := os.ReadFile(c.In)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Generate(src, c.Options)
		if err != nil {
			t.Fatalf("generate %s: %v", c.Out, err)
		}
		got, err := os.ReadFile(c.Out)
		if err != nil || !bytes.Equal(got, want) {
			gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
			i := 0
			for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
				i++
			}
			t.Errorf("%s is out of date with %s (err %v; first difference at line %d).\n"+
				"Regenerate with `go generate ./alerts/` (or `go run ./alerts/cmd/gen` from the repository root) and commit the result.",
				c.Out, c.In, err, i+1)
		}
	}
}

// TestPrometheusRuleCarriesTheSourceGroups checks the PrometheusRule shape the operator
// expects and that spec.groups is the rule file's groups, unchanged.
func TestPrometheusRuleCarriesTheSourceGroups(t *testing.T) {
	out, err := Generate(readSource(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pr prometheusRule
	if err := yaml.Unmarshal(out, &pr); err != nil {
		t.Fatal(err)
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || pr.Metadata.Name != "lease-exporter" {
		t.Errorf("got %s %s %s, want monitoring.coreos.com/v1 PrometheusRule lease-exporter", pr.APIVersion, pr.Kind, pr.Metadata.Name)
	}
	var rf ruleFile
	if err := yaml.Unmarshal(readSource(t), &rf); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pr.Spec.Groups, rf.Groups) {
		t.Error("spec.groups differs from the groups of the rule file")
	}
}

func TestOptions(t *testing.T) {
	src := readSource(t)
	gen := func(o Options) ruleFile {
		t.Helper()
		o.Format = formatRules
		b, err := Generate(src, o)
		if err != nil {
			t.Fatal(err)
		}
		var rf ruleFile
		if err := yaml.Unmarshal(b, &rf); err != nil {
			t.Fatal(err)
		}
		return rf
	}
	rf := gen(Options{
		RunbookBaseURL: "https://wiki.example.com/lease-runbooks", // no trailing slash on purpose
		JobSelector:    `job="monitoring/lease-exporter"`,
		ReplicaLabels:  []string{"instance", "pod", "kubernetes_pod_name"},
		For:            map[string]string{"LeaseNoLeader": "5m", "LeaseExporterDown": "0"},
		Exempt:         []Exemption{{Namespace: "batch", Lease: "nightly"}},
	})
	records := map[string]string{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				records[r.Record] = r.Expr
			}
		}
	}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if strings.Contains(r.Expr, defaultJobSelector) || strings.Contains(r.Expr, defaultReplicaLabels) {
				t.Errorf("%s%s: default selector or replica labels left: %s", r.Alert, r.Record, r.Expr)
			}
			if r.Alert == "" {
				continue
			}
			if want := "https://wiki.example.com/lease-runbooks/" + r.Alert + ".md"; r.Annotations["runbook_url"] != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
			}
			// An alert on recordings (the participant join) selects the exporter in them.
			if !strings.Contains(withRecordings(r.Expr, records), `job="monitoring/lease-exporter"`) {
				t.Errorf("%s: job selector not applied: %s", r.Alert, r.Expr)
			}
		}
	}
	if r := findAlert(&rf, "LeaseNoLeader"); r.For != "5m" || !strings.Contains(r.Expr, "without (instance, pod, kubernetes_pod_name)") {
		t.Errorf("LeaseNoLeader: for %q, expr %s", r.For, r.Expr)
	}
	if r := findAlert(&rf, "LeaseExporterDown"); r.For != "" {
		t.Errorf("LeaseExporterDown: for %q, want none", r.For)
	}
	first := rf.Groups[0].Rules[0]
	if first.Record != exemptMetric || first.Labels["namespace"] != "batch" || first.Labels["lease"] != "nightly" || first.Labels["alert"] != "" {
		t.Errorf("exemption not prepended to the per-lease group: %+v", first)
	}
}

func TestBadOptionsFail(t *testing.T) {
	src := readSource(t)
	for name, o := range map[string]Options{
		"format":              {Format: "helm"},
		"job selector syntax": {JobSelector: "lease-exporter"},
		"replica label":       {ReplicaLabels: []string{"pod name"}},
		"for duration":        {For: map[string]string{"LeaseNoLeader": "2 minutes"}},
		"for alert":           {For: map[string]string{"LeaseNoLeaders": "2m"}},
		"exempt alert":        {Exempt: []Exemption{{Namespace: "a", Lease: "b", Alert: "LeaseExporterDown"}}},
	} {
		if _, err := Generate(src, o); err == nil {
			t.Errorf("%s: %+v accepted", name, o)
		}
	}
	for _, s := range []string{"lease", "/lease", "ns/", "a/b/c"} {
		if _, err := parseExemption(s); err == nil {
			t.Errorf("exemption %q accepted", s)
		}
	}
	// A field the generator does not know would be dropped from the PrometheusRule.
	if _, err := Generate([]byte("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    keep_firing_for: 5m\n"), Options{}); err == nil {
		t.Error("unknown rule field accepted")
	}
	// A source that lost a convention must not turn its option into a silent no-op.
	if _, err := Generate([]byte("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n"), Options{JobSelector: `job="x"`}); err == nil {
		t.Error("job selector without the default matcher in the source accepted")
	}
}
