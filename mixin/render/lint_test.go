package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// mixtool is not served here, so its lint rules for monitoring mixins are checked by these
// tests instead, on every mode the mixin renders: the defaults the repository ships and
// multi-cluster mode with a renamed cluster label.
var modes = map[string]string{"default": "", "multi-cluster": multiCluster}

// Alert names as mixtool wants them: UpperCamelCase.
var camelCase = regexp.MustCompile(`^[A-Z][a-zA-Z0-9]+$`)

// TestAlertsFollowMixinConventions is mixtool's alert lint: every alert has a severity
// label and summary, description and runbook_url annotations, and an UpperCamelCase name.
func TestAlertsFollowMixinConventions(t *testing.T) {
	for mode, override := range modes {
		var rf RuleFile
		if err := yaml.Unmarshal(render(t, override).Alerts, &rf); err != nil {
			t.Fatal(err)
		}
		alerts := 0
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				alerts++
				where := mode + " " + r.Alert
				if !camelCase.MatchString(r.Alert) {
					t.Errorf("%s: alert name is not UpperCamelCase", where)
				}
				if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
					t.Errorf("%s: severity %q, want critical, warning or info", where, r.Labels["severity"])
				}
				for _, a := range []string{"summary", "description", "runbook_url"} {
					if strings.TrimSpace(r.Annotations[a]) == "" {
						t.Errorf("%s: no %s annotation", where, a)
					}
				}
				// The runbook the default pattern points at must exist in the repository.
				if u, ok := strings.CutPrefix(r.Annotations["runbook_url"], "https://github.com/lease-exporter/lease-exporter/blob/main/"); ok {
					if _, err := os.Stat(filepath.Join(repoRoot, u)); err != nil {
						t.Errorf("%s: runbook_url names %s, which does not exist", where, u)
					}
				}
			}
		}
		if alerts < 10 {
			t.Errorf("%s: found only %d alerts", mode, alerts)
		}
	}
}

// TestDashboardsFollowMixinConventions is mixtool's (and the Grafana dashboard linter's)
// dashboard lint: a unique uid, tags, a datasource variable that every panel and query
// variable uses.
func TestDashboardsFollowMixinConventions(t *testing.T) {
	for mode, override := range modes {
		uids := map[string]string{}
		r := render(t, override)
		for _, name := range r.DashboardNames() {
			where := mode + " " + name
			var d struct {
				UID, Title string
				Tags       []string
				Templating struct {
					List []struct {
						Name, Type string
						Query      any
						Datasource struct{ UID string }
					}
				}
				Panels []json.RawMessage
			}
			if err := json.Unmarshal(r.Dashboards[name], &d); err != nil {
				t.Fatal(err)
			}
			if d.UID == "" || uids[d.UID] != "" {
				t.Errorf("%s: uid %q missing or shared with %s", where, d.UID, uids[d.UID])
			}
			uids[d.UID] = name
			if d.Title == "" || !slices.Contains(d.Tags, "lease-exporter") {
				t.Errorf("%s: needs a title and the tag lease-exporter (tags %v)", where, d.Tags)
			}
			hasDS := false
			for _, v := range d.Templating.List {
				hasDS = hasDS || (v.Type == "datasource" && v.Query == "prometheus")
				if v.Type == "query" && v.Datasource.UID != "${datasource}" {
					t.Errorf("%s: variable %s does not use the datasource variable", where, v.Name)
				}
			}
			if !hasDS {
				t.Errorf("%s: no Prometheus datasource variable", where)
			}
			for _, p := range d.Panels {
				var panel struct {
					Title      string
					Datasource struct{ UID string }
				}
				_ = json.Unmarshal(p, &panel)
				if panel.Datasource.UID != "${datasource}" {
					t.Errorf("%s panel %q: datasource is not ${datasource}", where, panel.Title)
				}
			}
		}
	}
}

// TestPromtoolChecksEveryRendering: promtool accepts the alerts and rules of every mode.
func TestPromtoolChecksEveryRendering(t *testing.T) {
	promtool := promtoolPath(t)
	for mode, override := range modes {
		r := render(t, override)
		dir := t.TempDir()
		for name, b := range map[string][]byte{"alerts.yaml": r.Alerts, "rules.yaml": r.Rules} {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(promtool, "check", "rules", p).CombinedOutput(); err != nil {
				t.Errorf("%s %s: promtool check rules: %v\n%s", mode, name, err, out)
			}
		}
	}
}

// TestMultiClusterDashboardsPassDashcheck: the dashboards only multi-cluster mode renders
// (the fleet overview, the single-cluster variable) pass the same schema, convention and
// metric-contract checks as the shipped ones (hack/dashcheck/check.sh, which needs node).
func TestMultiClusterDashboardsPassDashcheck(t *testing.T) {
	dir := t.TempDir()
	if err := run(repoRoot, "{ showMultiCluster: true }", dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "dashcheck", "check.sh"), filepath.Join(dir, "dashboards_out"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dashcheck on the multi-cluster rendering: %v\n%s", err, out)
	} else {
		t.Log(summary(string(out)))
	}
}

// summary is dashcheck's own verdict line: how many dashboards and panels it passed.
func summary(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "dashcheck: ") && strings.Contains(l, "OK") {
			return l
		}
	}
	return "dashcheck printed no summary"
}
