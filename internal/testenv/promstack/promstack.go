// Package promstack runs Debian's real Prometheus and Alertmanager on loopback with the
// project's rules, for end-to-end tests and the demo.
package promstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// Process is a running Prometheus or Alertmanager.
type Process struct {
	Name string
	URL  string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// Pid is the process id, for reading its CPU and memory from /proc.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Logs returns what the process wrote.
func (p *Process) Logs() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// Stop terminates the process and waits for it.
func (p *Process) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Command is a program Start runs: Prometheus, Alertmanager, or (internal/testenv/promoperator)
// the Prometheus Operator.
type Command struct {
	Name string // names the log file and errors
	Bin  string // a path, or a name looked up in PATH
	// Hint says how to get Bin when it is missing; default: install Debian's package of that name.
	Hint string
	Dir  string // working directory, where the log goes
	Port int    // the loopback port it serves HTTP on
	// ReadyPath answers 200 once it is ready; default /-/ready (Prometheus, Alertmanager).
	ReadyPath string
	Args      []string
	Env       []string // added to this process's environment
}

// Start runs c in its own process group, killed with the caller, and waits until it is ready.
func Start(ctx context.Context, c Command) (*Process, error) {
	path, err := exec.LookPath(c.Bin)
	if err != nil {
		if c.Hint == "" {
			c.Hint = fmt.Sprintf("install Debian's %s package (hack/deps.sh does)", c.Bin)
		}
		return nil, fmt.Errorf("%s not found: %s", c.Bin, c.Hint)
	}
	if c.ReadyPath == "" {
		c.ReadyPath = "/-/ready"
	}
	logPath := filepath.Join(c.Dir, c.Name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", c.Name, err)
	}
	p := &Process{Name: c.Name, URL: fmt.Sprintf("http://127.0.0.1:%d", c.Port), cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	if err := waitReady(ctx, p, c.ReadyPath, 60*time.Second); err != nil {
		p.Stop()
		return nil, fmt.Errorf("%w\n%s log:\n%s", err, c.Name, p.Logs())
	}
	return p, nil
}

func waitReady(ctx context.Context, p *Process, path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited during start", p.Name)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if resp, err := http.Get(p.URL + path); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within %s", p.Name, timeout)
}

// AlertmanagerOptions configure StartAlertmanager.
type AlertmanagerOptions struct {
	// WebhookURL receives every alert; empty means a receiver that drops them.
	WebhookURL string
}

// StartAlertmanager runs Alertmanager in dir with one route to the webhook, grouping by
// alertname/namespace/lease and sending at once so tests see alerts quickly.
func StartAlertmanager(ctx context.Context, dir string, o AlertmanagerOptions) (*Process, error) {
	port, err := exporterproc.FreePort()
	if err != nil {
		return nil, err
	}
	cluster, err := exporterproc.FreePort()
	if err != nil {
		return nil, err
	}
	receiver := `{name: default}`
	if o.WebhookURL != "" {
		receiver = fmt.Sprintf(`{name: default, webhook_configs: [{url: %q, send_resolved: true}]}`, o.WebhookURL)
	}
	cfg := fmt.Sprintf(`route:
  receiver: default
  group_by: [alertname, namespace, lease]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers: [%s]
`, receiver)
	cfgPath := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return Start(ctx, Command{Name: "alertmanager", Bin: "prometheus-alertmanager", Dir: dir, Port: port, Args: []string{
		"--config.file=" + cfgPath,
		"--storage.path=" + filepath.Join(dir, "am-data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		fmt.Sprintf("--cluster.listen-address=127.0.0.1:%d", cluster),
	}})
}

// PrometheusOptions configure StartPrometheus.
type PrometheusOptions struct {
	Targets          []string // host:port of exporters, scraped as job "lease-exporter"
	RuleFiles        []string
	AlertmanagerURL  string // empty: no alerting
	ScrapeInterval   time.Duration
	EvaluationPeriod time.Duration
	// ScrapeTimeout defaults to Prometheus' own (10s, capped at the interval).
	ScrapeTimeout time.Duration
	// ExternalLabels are not stored with the series, but seed the scrape offset: instances
	// on one host with different external labels do not all scrape at the same moment.
	ExternalLabels map[string]string
	// MetricRelabelConfigs is the job's metric_relabel_configs as a YAML flow sequence,
	// e.g. `[{source_labels: [__name__], regex: "lease_held", action: keep}]`.
	MetricRelabelConfigs string
	// Args are extra command-line flags, e.g. --web.enable-admin-api.
	Args []string
	// ScrapeConfigs are more jobs, YAML list items indented to follow the exporter's job
	// under scrape_configs (two spaces before each "- job_name").
	ScrapeConfigs string
	// TargetLabels are set on the exporter's targets, so every series of the job carries them
	// (up included), as a global query layer's cluster label does.
	TargetLabels map[string]string
}

// StartPrometheus runs Prometheus in dir scraping the targets with the rules loaded.
func StartPrometheus(ctx context.Context, dir string, o PrometheusOptions) (*Process, error) {
	targets, _ := json.Marshal(o.Targets)
	rules, _ := json.Marshal(o.RuleFiles)
	global := fmt.Sprintf("scrape_interval: %s, evaluation_interval: %s", o.ScrapeInterval, o.EvaluationPeriod)
	if o.ScrapeTimeout > 0 {
		global += fmt.Sprintf(", scrape_timeout: %s", o.ScrapeTimeout)
	}
	if len(o.ExternalLabels) > 0 {
		ext, _ := json.Marshal(o.ExternalLabels)
		global += ", external_labels: " + string(ext)
	}
	static := "targets: " + string(targets)
	if len(o.TargetLabels) > 0 {
		labels, _ := json.Marshal(o.TargetLabels)
		static += ", labels: " + string(labels)
	}
	cfg := fmt.Sprintf(`global: {%s}
rule_files: %s
scrape_configs:
  - job_name: lease-exporter
    honor_labels: true
    static_configs: [{%s}]
`, global, rules, static)
	if o.MetricRelabelConfigs != "" {
		cfg += "    metric_relabel_configs: " + o.MetricRelabelConfigs + "\n"
	}
	cfg += o.ScrapeConfigs
	if o.AlertmanagerURL != "" {
		u, err := url.Parse(o.AlertmanagerURL)
		if err != nil {
			return nil, err
		}
		cfg += fmt.Sprintf("alerting: {alertmanagers: [{static_configs: [{targets: [%q]}]}]}\n", u.Host)
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return StartPrometheusConfig(ctx, "", dir, cfgPath, o.Args...)
}

// StartPrometheusConfig runs the Prometheus binary bin (empty: Debian's, on PATH) in dir from
// the configuration file cfgPath, with reloads (POST /-/reload) enabled and extra flags args.
func StartPrometheusConfig(ctx context.Context, bin, dir, cfgPath string, args ...string) (*Process, error) {
	port, err := exporterproc.FreePort()
	if err != nil {
		return nil, err
	}
	if bin == "" {
		bin = "prometheus"
	}
	return Start(ctx, Command{Name: "prometheus", Bin: bin, Dir: dir, Port: port, Args: append([]string{
		"--config.file=" + cfgPath,
		"--storage.tsdb.path=" + filepath.Join(dir, "prom-data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--web.enable-lifecycle",
	}, args...)})
}

// Query runs an instant PromQL query and returns the raw JSON "data.result".
func Query(promURL, expr string) (json.RawMessage, error) {
	var data struct {
		Result json.RawMessage `json:"result"`
	}
	if err := apiGet(promURL+"/api/v1/query?query="+url.QueryEscape(expr), &data); err != nil {
		return nil, fmt.Errorf("query %q: %w", expr, err)
	}
	return data.Result, nil
}

// Alert is one active alert as Prometheus's /api/v1/alerts lists it: pending or firing, with
// its annotations as of the latest evaluation (the ALERTS series has no annotations).
type Alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
}

// Alerts returns Prometheus's active alerts.
func Alerts(promURL string) ([]Alert, error) {
	var data struct {
		Alerts []Alert `json:"alerts"`
	}
	if err := apiGet(promURL+"/api/v1/alerts", &data); err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	return data.Alerts, nil
}

// apiGet GETs a Prometheus API URL and decodes its "data" into data; an error carries the
// API's own error, or the body when it is not the API's JSON.
func apiGet(u string, data any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%w: %s", err, body)
	}
	if r.Status != "success" {
		return errors.New(r.Error)
	}
	return json.Unmarshal(r.Data, data)
}
