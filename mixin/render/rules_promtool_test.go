package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"
)

// promtool finds the promtool binary. A missing promtool fails the test rather than
// skipping it: a skipped rule test reads as green while the rules go untested.
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is not in PATH, and the alert rules cannot be tested without it.\n"+
			"Install it (Debian/Ubuntu: apt-get install prometheus) or set PROMTOOL=/path/to/promtool. (%v)", err)
	}
	return p
}

func runPromtool(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(promtool(t), args...).CombinedOutput()
	return string(out), err
}

func testSuites(t *testing.T) []string {
	t.Helper()
	found, err := filepath.Glob(suites)
	if err != nil || len(found) == 0 {
		t.Fatalf("no promtool test suites in %s (%v)", suites, err)
	}
	return found
}

// TestPromtoolCheckRules checks the rule file and the groups of the committed PrometheusRule
// the way Prometheus itself would load them.
func TestPromtoolCheckRules(t *testing.T) {
	b, err := os.ReadFile(repoRoot + "/deploy/kustomize/prometheus-operator/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pr prometheusRule
	if err := yaml.Unmarshal(b, &pr); err != nil {
		t.Fatal(err)
	}
	groups, err := yaml.Marshal(ruleFile{Groups: pr.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "prometheusrule-spec.rules.yml")
	if err := os.WriteFile(spec, groups, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runPromtool(t, "check", "rules", source, spec); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

// TestPromtoolUnitTests runs every suite in mixin/tests/ (promtool test rules mixin/tests/*.yml).
func TestPromtoolUnitTests(t *testing.T) {
	promtool(t) // fail once, not once per suite, when promtool is missing
	for _, suite := range testSuites(t) {
		t.Run(filepath.Base(suite), func(t *testing.T) {
			if out, err := runPromtool(t, "test", "rules", suite); err != nil {
				t.Fatalf("promtool test rules %s: %v\n%s", suite, err, out)
			}
		})
	}
}

// TestEveryAlertIsTested requires, for each alert, a case where it must fire and a case
// where it must stay quiet, so no alert ships with only half of its behaviour pinned.
func TestEveryAlertIsTested(t *testing.T) {
	type suite struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string           `yaml:"alertname"`
				ExpAlerts []map[string]any `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, path := range testSuites(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var s suite
		if err := yaml.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, tc := range s.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					quiet[a.Alertname] = true
				}
			}
		}
	}
	for _, r := range sourceRules(t) {
		if r.Alert != "" && (!fires[r.Alert] || !quiet[r.Alert]) {
			t.Errorf("%s: mixin/tests/ needs a case where it fires (has: %v) and one where it must not (has: %v)",
				r.Alert, fires[r.Alert], quiet[r.Alert])
		}
	}
}

func sourceRules(t *testing.T) []rule {
	t.Helper()
	var rf ruleFile
	if err := yaml.Unmarshal(readSource(t), &rf); err != nil {
		t.Fatal(err)
	}
	var rules []rule
	for _, g := range rf.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}
