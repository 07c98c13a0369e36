// Package mixin renders the repository's monitoring mixin with a _config override, through
// its one renderer (mixin/render, its own Go module, which brings go-jsonnet), for the suites
// that run the alerts or dashboards with other settings than the shipped defaults: shorter
// `for` durations, multi-cluster mode. What they test is then what a user's _config yields.
package mixin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// Rendering is where Render wrote the files, in mixtool's layout.
type Rendering struct {
	Alerts     string // prometheus_alerts.yaml, a Prometheus rule file
	Dashboards string // dashboards_out/, the Grafana dashboards
	Perses     string // perses_dashboards_out/, the Perses dashboards
}

// Render renders the mixin with override merged into its _config (a jsonnet object) into dir.
func Render(ctx context.Context, override, dir string) (Rendering, error) {
	root, err := exporterproc.ModuleRoot()
	if err != nil {
		return Rendering{}, err
	}
	cmd := exec.CommandContext(ctx, "go", "run", ".", "-root", root, "-config", override, "-out", dir)
	cmd.Dir = filepath.Join(root, "mixin", "render")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Rendering{}, fmt.Errorf("render the mixin with %s: %w\n%s", override, err, out)
	}
	return Rendering{
		Alerts:     filepath.Join(dir, "prometheus_alerts.yaml"),
		Dashboards: filepath.Join(dir, "dashboards_out"),
		Perses:     filepath.Join(dir, "perses_dashboards_out"),
	}, nil
}
