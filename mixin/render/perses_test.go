package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The renderings every Perses test checks: the shipped defaults, and multi-cluster mode with
// another cluster label and the status-page link (the fleet overview and the single-cluster
// variable exist only there).
var persesConfigs = map[string]string{
	"default":       "",
	"multi-cluster": `{ showMultiCluster: true, clusterLabel: 'k8s_cluster', statusPageURL: 'https://lease-exporter.{{ $labels.k8s_cluster }}.example' }`,
}

// pluginPath assembles (or reuses from the cache) the Perses plugins with their real CUE
// schemas: hack/perses/plugins.sh, which needs npm and the Go module proxy.
func pluginPath(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "perses", "plugins.sh"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/perses/plugins.sh: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// percli runs Perses' CLI v0.52.0, pinned as a tool of the hack/perses module (built by the
// go command on first use and cached like any build), and returns its combined output.
func percli(t *testing.T, args ...string) (string, error) {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(repoRoot, "hack", "perses"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"-C", abs, "tool", "percli"}, args...)...)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GONOSUMDB=github.com/perses/plugins", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// lint runs `percli lint --plugin.path` on one file or a directory. Without --plugin.path
// percli validates no plugin spec at all and still reports success, so the path is required.
func lint(t *testing.T, plugins, flag, path string) (string, error) {
	return percli(t, "lint", flag, path, "--plugin.path", plugins)
}

// TestPersesDashboardsPassPercliLint: every Perses dashboard of every rendering validates
// against the real schemas of the plugins it uses (panels, queries, variables).
func TestPersesDashboardsPassPercliLint(t *testing.T) {
	plugins := pluginPath(t)
	for name, override := range persesConfigs {
		r := render(t, override)
		dir := t.TempDir()
		for _, n := range r.PersesNames() {
			if err := os.WriteFile(filepath.Join(dir, n), r.Perses[n], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := lint(t, plugins, "-d", dir); err != nil || !strings.Contains(out, "look good") {
			t.Errorf("%s rendering: percli lint failed (%v):\n%s", name, err, out)
		} else {
			t.Logf("%s rendering: %d Perses dashboards pass percli lint", name, len(r.Perses))
		}
	}
}

// TestPercliLintCatchesBrokenDashboards proves the lint above validates: a query of an
// unknown kind, a panel of an unknown kind, an empty query, a known panel with a spec its
// schema refuses and a variable without its label each fail it, and say why.
func TestPercliLintCatchesBrokenDashboards(t *testing.T) {
	plugins := pluginPath(t)
	good := render(t, "").Perses["leases-overview.json"]
	for _, c := range []struct {
		name, want string
		breakIt    func(dashboard, panel map[string]any)
	}{
		{"query kind", "schema not found for plugin PrometheusRangeQuery", func(_, p map[string]any) {
			firstQuery(p)["kind"] = "PrometheusRangeQuery"
		}},
		{"panel kind", "schema not found for plugin BarGauge", func(_, p map[string]any) {
			p["spec"].(map[string]any)["plugin"].(map[string]any)["kind"] = "BarGauge"
		}},
		{"empty query", "strings.MinRunes(1)", func(_, p map[string]any) {
			firstQuery(p)["spec"].(map[string]any)["query"] = ""
		}},
		// What the translation writes into a known panel's spec is checked too.
		{"panel spec", "calculation", func(_, p map[string]any) {
			p["spec"].(map[string]any)["plugin"] = map[string]any{"kind": "StatChart", "spec": map[string]any{"calculation": "median"}}
		}},
		{"variable spec", "labelName", func(d, _ map[string]any) {
			v := d["spec"].(map[string]any)["variables"].([]any)[0].(map[string]any)
			v["spec"].(map[string]any)["plugin"].(map[string]any)["spec"].(map[string]any)["labelName"] = ""
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(good, &d); err != nil {
				t.Fatal(err)
			}
			panels := d["spec"].(map[string]any)["panels"].(map[string]any)
			// The first panel by key, so every run breaks the same one.
			c.breakIt(d, panels[slices.Sorted(maps.Keys(panels))[0]].(map[string]any))
			b, _ := json.Marshal(d)
			f := filepath.Join(t.TempDir(), "broken.json")
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := lint(t, plugins, "-f", f)
			if err == nil || !strings.Contains(out, c.want) {
				t.Errorf("percli lint of a dashboard with a broken %s: err=%v, want a failure saying %q:\n%s", c.name, err, c.want, out)
			}
		})
	}
}

// firstQuery returns a panel's first query's plugin.
func firstQuery(panel map[string]any) map[string]any {
	qs := panel["spec"].(map[string]any)["queries"].([]any)
	return qs[0].(map[string]any)["spec"].(map[string]any)["plugin"].(map[string]any)
}

// TestPersesDashboardsAreTheGrafanaOnes: each Perses dashboard is its Grafana twin, not a
// second hand-written copy: the same panels (titles and places); every panel's queries in the
// same order (less a table's date columns, which perses.libsonnet leaves out) with the same
// legends (tables and state timelines name their rows by the query's labels instead of
// Grafana's transformations); and the same variables, with the same label_values queries and
// the same single, multiple and All choices, in every rendering.
func TestPersesDashboardsAreTheGrafanaOnes(t *testing.T) {
	type target struct {
		Expr, LegendFormat, RefID string
		Hide                      bool
	}
	type grafana struct {
		UID        string
		Templating struct {
			List []struct {
				Name, Type, Query string
				Multi, IncludeAll bool
			}
		}
		Panels []struct {
			Type, Title string
			GridPos     struct{ X, Y, W, H int }
			Targets     []target
			FieldConfig struct {
				Overrides []struct {
					Matcher struct {
						ID      string
						Options any
					}
					Properties []struct {
						ID    string
						Value any
					}
				}
			}
			Transformations []struct {
				ID      string
				Options struct {
					RenameByName map[string]string
				}
			}
		}
	}
	type perses struct {
		Metadata struct{ Name, Project string }
		Spec     struct {
			Variables []struct {
				Spec struct {
					Name                         string
					AllowMultiple, AllowAllValue bool
					Plugin                       struct {
						Kind string
						Spec struct {
							LabelName string
							Matchers  []string
						}
					}
				}
			}
			Panels map[string]struct {
				Spec struct {
					Display struct{ Name string }
					Queries []struct {
						Spec struct {
							Plugin struct {
								Spec struct{ Query, SeriesNameFormat string }
							}
						}
					}
				}
			}
			Layouts []struct {
				Spec struct {
					Items []struct {
						X, Y, Width, Height int
						Content             struct {
							Ref string `json:"$ref"`
						}
					}
				}
			}
		}
	}
	for name, override := range persesConfigs {
		r := render(t, override)
		if len(r.Perses) != len(r.Dashboards) {
			t.Errorf("%s: %d Perses dashboards for %d Grafana ones", name, len(r.Perses), len(r.Dashboards))
		}
		for _, file := range r.DashboardNames() {
			var g grafana
			var p perses
			if err := json.Unmarshal(r.Dashboards[file], &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(r.Perses[file], &p); err != nil {
				t.Fatalf("%s: no Perses twin of %s: %v", name, file, err)
			}
			if p.Metadata.Name != g.UID || p.Metadata.Project != "lease-exporter" {
				t.Errorf("%s %s: Perses name/project %s/%s, want %s/lease-exporter", name, file, p.Metadata.Project, p.Metadata.Name, g.UID)
			}
			var wantVars, gotVars []string
			for _, v := range g.Templating.List {
				if v.Type == "query" {
					wantVars = append(wantVars, fmt.Sprintf("%s %s multiple=%t all=%t", v.Name, v.Query, v.Multi, v.IncludeAll))
				}
			}
			for _, v := range p.Spec.Variables {
				s := v.Spec.Plugin.Spec
				q := "label_values(" + s.LabelName + ")"
				if len(s.Matchers) == 1 {
					q = "label_values(" + s.Matchers[0] + ", " + s.LabelName + ")"
				}
				gotVars = append(gotVars, fmt.Sprintf("%s %s multiple=%t all=%t", v.Spec.Name, q, v.Spec.AllowMultiple, v.Spec.AllowAllValue))
			}
			if !slices.Equal(gotVars, wantVars) {
				t.Errorf("%s %s: Perses variables\n  %q\nwant the Grafana ones\n  %q", name, file, gotVars, wantVars)
			}
			panels := g.Panels[:0:0]
			for _, gp := range g.Panels {
				if gp.Type != "row" {
					panels = append(panels, gp)
				}
			}
			if len(p.Spec.Layouts) != 1 || len(p.Spec.Layouts[0].Spec.Items) != len(panels) || len(p.Spec.Panels) != len(panels) {
				t.Errorf("%s %s: Perses has %d panels, Grafana %d", name, file, len(p.Spec.Panels), len(panels))
				continue
			}
			for i, gp := range panels {
				item := p.Spec.Layouts[0].Spec.Items[i]
				pp := p.Spec.Panels[strings.TrimPrefix(item.Content.Ref, "#/spec/panels/")]
				if pp.Spec.Display.Name != gp.Title || [4]int{item.X, item.Y, item.Width, item.Height} != [4]int{gp.GridPos.X, gp.GridPos.Y, gp.GridPos.W, gp.GridPos.H} {
					t.Errorf("%s %s: Perses panel %d is %q at %v, Grafana's %q at %v", name, file, i, pp.Spec.Display.Name,
						[4]int{item.X, item.Y, item.Width, item.Height}, gp.Title, gp.GridPos)
					continue
				}
				// A table column's title (organize's rename of "Value #<refId>") and its unit
				// (a byName override).
				dateColumn := func(tg target) bool {
					title := "Value #" + tg.RefID
					for _, tr := range gp.Transformations {
						if n, ok := tr.Options.RenameByName[title]; tr.ID == "organize" && ok {
							title = n
						}
					}
					for _, o := range gp.FieldConfig.Overrides {
						for _, prop := range o.Properties {
							if o.Matcher.ID == "byName" && o.Matcher.Options == title && prop.ID == "unit" && strings.HasPrefix(fmt.Sprint(prop.Value), "dateTime") {
								return true
							}
						}
					}
					return false
				}
				var want []target
				for _, tg := range gp.Targets {
					if !tg.Hide && !(gp.Type == "table" && dateColumn(tg)) {
						want = append(want, tg)
					}
				}
				if len(pp.Spec.Queries) != len(want) {
					t.Errorf("%s %s panel %q: %d Perses queries for %d Grafana ones", name, file, gp.Title, len(pp.Spec.Queries), len(want))
					continue
				}
				for j, q := range pp.Spec.Queries {
					if q.Spec.Plugin.Spec.Query != want[j].Expr {
						t.Errorf("%s %s panel %q query %d: Perses\n  %s\nGrafana\n  %s", name, file, gp.Title, j, q.Spec.Plugin.Spec.Query, want[j].Expr)
					}
					if gp.Type != "table" && gp.Type != "state-timeline" && q.Spec.Plugin.Spec.SeriesNameFormat != want[j].LegendFormat {
						t.Errorf("%s %s panel %q query %d: legend %q, Grafana's %q", name, file, gp.Title, j, q.Spec.Plugin.Spec.SeriesNameFormat, want[j].LegendFormat)
					}
				}
			}
		}
	}
}
