// Command mixin renders mixin/ (lease-exporter's monitoring mixin) with go-jsonnet.
//
//	go run . -root ../..                       write the default rendering where the repository
//	                                            ships it: alerts/lease-exporter.rules.yml, dashboards/
//	go run . -config '{showMultiCluster: true}' -out DIR
//	                                            write another _config's rendering in mixtool's
//	                                            layout: DIR/prometheus_alerts.yaml,
//	                                            DIR/prometheus_rules.yaml, DIR/dashboards_out/
//
// `make generate` runs the first; the tests in this directory render in memory with the same
// code and fail when the committed files differ.
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
		// Dashboards the mixin no longer renders must not linger in dashboards/.
		old, _ := filepath.Glob(filepath.Join(root, "dashboards", "*.json"))
		for _, f := range old {
			if _, ok := files[filepath.Join("dashboards", filepath.Base(f))]; !ok {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
		}
	} else {
		files["prometheus_alerts.yaml"] = r.Alerts
		files["prometheus_rules.yaml"] = r.Rules
		for _, n := range r.DashboardNames() {
			files[filepath.Join("dashboards_out", n)] = r.Dashboards[n]
		}
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

// ShippedFiles maps the repository paths of the default rendering to their contents. The
// mixin's few recording rules run inside prometheusAlerts' groups, so prometheusRules is empty
// and not shipped (the tests check it is empty).
func ShippedFiles(r *Rendering) map[string][]byte {
	files := map[string][]byte{"alerts/lease-exporter.rules.yml": r.Alerts}
	for n, b := range r.Dashboards {
		files[filepath.Join("dashboards", n)] = b
	}
	return files
}
