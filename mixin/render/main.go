// Command mixin renders mixin/ (lease-exporter's monitoring mixin) with go-jsonnet: the one
// pipeline from which the repository's alerts, PrometheusRules and dashboards come.
//
//	go run . -root ../..                       write the default rendering everywhere the
//	                                            repository ships it (ShippedFiles): the rule
//	                                            file, dashboards/, and the copies Helm and
//	                                            Kustomize need inside their directories
//	go run . -config '{showMultiCluster: true}' -out DIR
//	                                            write another _config's rendering in mixtool's
//	                                            layout: DIR/prometheus_alerts.yaml,
//	                                            DIR/prometheus_rules.yaml, DIR/dashboards_out/,
//	                                            and DIR/prometheusrule.yaml for the operator;
//	                                            DIR/perses_dashboards_out/ and
//	                                            DIR/persesdashboards.yaml for Perses
//
// `make generate` runs the first, `make mixin CONFIG=... OUT=...` the second; the tests in
// this directory render in memory with the same code and fail when a committed file differs.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", "../..", "repository root (mixin/ is read from there)")
	config := flag.String("config", "", "jsonnet object merged into _config; with it, -out is required")
	out := flag.String("out", "", "write the rendering in mixtool's layout to this directory")
	flag.Parse()
	if err := run(*root, *config, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mixin:", err)
		os.Exit(1)
	}
}

func run(root, config, out string) error {
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if config != "" && out == "" {
		return fmt.Errorf("-config renders a non-default _config: give -out, the repository ships only the defaults")
	}
	r, err := Render(filepath.Join(root, "mixin"), config)
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	if out == "" {
		files = ShippedFiles(r)
		out = root
		// Dashboards the mixin no longer renders must not linger in any dashboards directory.
		for _, dir := range allDashboardDirs() {
			old, _ := filepath.Glob(filepath.Join(root, dir, "*.json"))
			for _, f := range old {
				if _, ok := files[filepath.Join(dir, filepath.Base(f))]; !ok {
					if err := os.Remove(f); err != nil {
						return err
					}
				}
			}
		}
	} else {
		files["prometheus_alerts.yaml"] = r.Alerts
		files["prometheus_rules.yaml"] = r.Rules
		files["prometheusrule.yaml"] = r.PrometheusRule
		for _, n := range r.DashboardNames() {
			files[filepath.Join("dashboards_out", n)] = r.Dashboards[n]
		}
		for _, n := range r.PersesNames() {
			files[filepath.Join("perses_dashboards_out", n)] = r.Perses[n]
		}
		files["persesdashboards.yaml"] = r.PersesResources
	}
	for rel, b := range files {
		p := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "mixin: wrote %d files under %s\n", len(files), out)
	return nil
}

// dashboardDirs hold the default rendering's dashboards: dashboards/ for Grafana users, and
// a copy inside each of the chart and the Kustomize component, which can read no file
// outside their own directory.
var dashboardDirs = []string{
	"dashboards",
	"deploy/helm/lease-exporter/dashboards",
	"deploy/kustomize/components/prometheus-operator/dashboards",
}

// persesDirs hold the Perses dashboards: dashboards/perses/ for Perses users (percli apply),
// and the chart's copy, from which its template writes PersesDashboard resources.
var persesDirs = []string{
	"dashboards/perses",
	"deploy/helm/lease-exporter/perses",
}

// allDashboardDirs are the directories of both kinds of dashboard JSON.
func allDashboardDirs() []string {
	return append(append([]string{}, dashboardDirs...), persesDirs...)
}

// persesDashboardFile is the Kustomize component's PersesDashboard resources.
const persesDashboardFile = "deploy/kustomize/components/perses/persesdashboards.yaml"

// prometheusRuleFiles hold the PrometheusRule: the Kustomize resource, and the chart's copy
// (whose spec its template uses), for the same reason.
var prometheusRuleFiles = []string{
	"deploy/kustomize/prometheus-operator/prometheusrule.yaml",
	"deploy/helm/lease-exporter/files/prometheusrule.yaml",
}

// ShippedFiles maps the repository paths of the default rendering to their contents. The
// mixin's few recording rules run inside prometheusAlerts' groups, so prometheusRules is empty
// and not shipped (the tests check it is empty).
func ShippedFiles(r *Rendering) map[string][]byte {
	files := map[string][]byte{"alerts/lease-exporter.rules.yml": r.Alerts}
	for _, f := range prometheusRuleFiles {
		files[f] = r.PrometheusRule
	}
	for _, dir := range dashboardDirs {
		for n, b := range r.Dashboards {
			files[filepath.Join(dir, n)] = b
		}
	}
	for _, dir := range persesDirs {
		for n, b := range r.Perses {
			files[filepath.Join(dir, n)] = b
		}
	}
	files[persesDashboardFile] = r.PersesResources
	return files
}
