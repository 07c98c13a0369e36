// Package perses runs a real Perses server on loopback, built by hack/perses/build.sh with
// the plugins of hack/perses/plugins.sh, a file database and one Prometheus datasource, so
// the release tier can open the shipped dashboards in a browser (test/e2e, perses_test.go).
package perses

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
)

// Tools are the built Perses binaries and the assembled plugin directory.
type Tools struct {
	Perses, Percli string
	Plugins        string
}

// Build runs hack/perses/build.sh and hack/perses/plugins.sh under root: no-ops once cached,
// else minutes (make test-release starts the build in the background first; the script's lock
// makes this wait for it).
func Build(ctx context.Context, root string) (Tools, error) {
	bin, err := lastLine(ctx, filepath.Join(root, "hack", "perses", "build.sh"))
	if err != nil {
		return Tools{}, fmt.Errorf("hack/perses/build.sh (builds Perses from the Go module proxy and npm): %w", err)
	}
	plugins, err := lastLine(ctx, filepath.Join(root, "hack", "perses", "plugins.sh"))
	if err != nil {
		return Tools{}, fmt.Errorf("hack/perses/plugins.sh (assembles the Perses plugins from npm and the Go module proxy): %w", err)
	}
	return Tools{Perses: filepath.Join(bin, "perses"), Percli: filepath.Join(bin, "percli"), Plugins: plugins}, nil
}

func lastLine(ctx context.Context, script string) (string, error) {
	cmd := exec.CommandContext(ctx, script)
	// The scripts run npm and go build: on a timeout the whole process group goes, not only
	// the shell, so nothing keeps the build lock or its temporary directory.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// Server is a running Perses.
type Server struct {
	*promstack.Process
	tools Tools
	db    string
}

// Stop stops Perses and removes its database.
func (s *Server) Stop() {
	s.Process.Stop()
	_ = os.RemoveAll(s.db)
}

// Start runs Perses in dir with a file database, the plugins, and promURL as the default
// global datasource, whose scrape interval (for $__rate_interval) is scrapeInterval.
func Start(ctx context.Context, dir string, tools Tools, promURL string, scrapeInterval time.Duration) (*Server, error) {
	port, err := exporterproc.FreePort()
	if err != nil {
		return nil, err
	}
	// An empty archive directory: the plugins are already unpacked in Plugins, and Perses
	// would otherwise look for archives to unpack under its working directory.
	archive := filepath.Join(dir, "plugins-archive")
	if err := os.MkdirAll(archive, 0o755); err != nil {
		return nil, err
	}
	// Perses 0.52's file database lists nothing (it stores, then finds no datasource or
	// dashboard) when its folder's path has an upper-case letter, as every t.TempDir's does:
	// it gets a lower-case temporary directory of its own, removed by Stop.
	db, err := os.MkdirTemp("", "perses-db-")
	if err != nil {
		return nil, err
	}
	// Perses writes its plugin index into the plugin directory: each server gets a copy,
	// so the cached one stays as hack/perses/plugins.sh assembled it.
	plugins := filepath.Join(db, "plugins")
	if out, err := exec.Command("cp", "-r", tools.Plugins, plugins).CombinedOutput(); err != nil {
		_ = os.RemoveAll(db)
		return nil, fmt.Errorf("copy the Perses plugins: %v: %s", err, out)
	}
	cfg := fmt.Sprintf(`database:
  file:
    folder: %q
    extension: json
plugin:
  path: %q
  archive_path: %q
security:
  readonly: false
  enable_auth: false
`, filepath.Join(db, "data"), plugins, archive)
	cfgPath := filepath.Join(dir, "perses.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		_ = os.RemoveAll(db)
		return nil, err
	}
	p, err := promstack.Start(ctx, promstack.Command{
		Name: "perses", Bin: tools.Perses, Hint: "build it with hack/perses/build.sh", Dir: dir, Port: port,
		ReadyPath: "/api/v1/health",
		Args:      []string{"-config", cfgPath, "-web.listen-address", fmt.Sprintf("127.0.0.1:%d", port), "-web.hide-port"},
	})
	if err != nil {
		_ = os.RemoveAll(db)
		return nil, err
	}
	s := &Server{Process: p, tools: tools, db: db}
	ds := map[string]any{
		"kind":     "GlobalDatasource",
		"metadata": map[string]any{"name": "prometheus"},
		"spec":     prometheusDatasource(promURL, scrapeInterval),
	}
	if err := s.post("/api/v1/globaldatasources", ds); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// prometheusDatasource is the spec of a default Prometheus datasource proxied to promURL.
func prometheusDatasource(promURL string, scrapeInterval time.Duration) map[string]any {
	return map[string]any{"default": true, "plugin": map[string]any{
		"kind": "PrometheusDatasource",
		"spec": map[string]any{
			"scrapeInterval": scrapeInterval.String(),
			"proxy":          map[string]any{"kind": "HTTPProxy", "spec": map[string]any{"url": promURL}},
		},
	}}
}

// CreateProject creates a Perses project.
func (s *Server) CreateProject(name string) error {
	return s.post("/api/v1/projects", map[string]any{"kind": "Project", "metadata": map[string]any{"name": name}})
}

// CreateProjectDatasource gives project a default Prometheus datasource of its own, promURL,
// which its dashboards use instead of the global one.
func (s *Server) CreateProjectDatasource(project, promURL string, scrapeInterval time.Duration) error {
	return s.post("/api/v1/projects/"+project+"/datasources", map[string]any{
		"kind":     "Datasource",
		"metadata": map[string]any{"name": "prometheus", "project": project},
		"spec":     prometheusDatasource(promURL, scrapeInterval),
	})
}

// CreateDashboard stores a Perses Dashboard (JSON) in project, which the server validates
// against the plugins' schemas as it does a user's.
func (s *Server) CreateDashboard(project string, dashboard []byte) error {
	var d map[string]any
	if err := json.Unmarshal(dashboard, &d); err != nil {
		return err
	}
	d["metadata"].(map[string]any)["project"] = project
	return s.post("/api/v1/projects/"+project+"/dashboards", d)
}

// Migrate converts a Grafana dashboard to a Perses one with `percli migrate` (offline, with
// the plugins' migration scripts), as a user moving from Grafana would.
func (s *Server) Migrate(ctx context.Context, grafanaFile string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, s.tools.Percli, "migrate", "-f", grafanaFile, "--plugin.path", s.tools.Plugins, "-o", "json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("percli migrate %s: %w\n%s", grafanaFile, err, stderr.String())
	}
	return out, nil
}

// DashboardURL is where the UI shows a dashboard, over the given time range ("15m": the last
// 15 minutes) with the given variable values.
func (s *Server) DashboardURL(project, name, start string, vars map[string]string) string {
	u := fmt.Sprintf("%s/projects/%s/dashboards/%s?start=%s", s.URL, project, name, start)
	for k, v := range vars {
		u += "&var-" + k + "=" + v
	}
	return u
}

func (s *Server) post(path string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := http.Post(s.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("perses POST %s: %s: %s", path, resp.Status, msg)
	}
	return nil
}
