// Package e2e checks what operators get from the shipped alerting rules and dashboards, with
// a real Prometheus and Alertmanager scraping the release-built exporter. What /metrics says
// about elections is test/integration's; faults and load are test/reliability's.
//
// The exporter watches a real kube-apiserver (internal/testenv) with real client-go leader
// elections and kube-schedulers; Prometheus loads the shipped rules and routes alerts through
// Alertmanager to a webhook receiver inside the test; the shipped dashboards' queries run
// against that Prometheus.
//
// One environment (control plane, exporter, Prometheus, Alertmanager, receiver) serves every
// test: each costs tens of seconds to start on the shared 2-core machine. Tests keep apart by
// using their own namespaces and delete their Leases when done, so one test's alerts never
// leak into another's checks.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/lease-exporter/lease-exporter/alerts"
	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// Shortened `for:` durations for the test copy of the rules; expressions and thresholds stay
// as shipped. NoLeader must still outlast a Fast failover (~5s) by a wide margin.
const (
	noLeaderFor   = 20 * time.Second
	clockSkewFor  = 30 * time.Second
	watchStaleFor = 10 * time.Second
	// preferredHolderFor replaces LeasePreferredHolderNotLeading's 5m.
	preferredHolderFor = 20 * time.Second
	staleThreshold     = 60 * time.Second // "> 60" in LeaseExporterWatchStale, as shipped
	scrapeInterval     = time.Second
	exporterJobName    = "lease-exporter" // promstack's job name; matches the rules' selector
)

type environment struct {
	root     string // repository root
	dir      string // everything the run writes; removed at the end
	cp       *controlplane.ControlPlane
	client   kubernetes.Interface
	exporter *exporterproc.Exporter
	prom, am *promstack.Process
	receiver *receiver
	klogPath string // client-go's log (the in-test leader-election candidates)
	keepDir  bool   // set when something failed: dir holds every process's full log
	stops    []func()
}

var env *environment

func TestMain(m *testing.M) {
	// Setup failures exit non-zero: missing binaries fail the package, never skip it.
	env = &environment{}
	code := 1
	if err := env.setup(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: setup failed: %v\n", err)
	} else {
		code = m.Run()
	}
	env.keepDir = code != 0
	env.teardown()
	os.Exit(code)
}

func (e *environment) setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, bin := range []string{"prometheus", "prometheus-alertmanager"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s not found in PATH: install Debian's prometheus and prometheus-alertmanager (hack/deps.sh)", bin)
		}
	}
	var err error
	if e.root, err = filepath.Abs("../.."); err != nil {
		return err
	}
	if e.dir, err = os.MkdirTemp("", "lease-exporter-e2e-"); err != nil {
		return err
	}
	e.stops = append(e.stops, func() {
		if e.keepDir {
			fmt.Fprintf(os.Stderr, "e2e: logs and data kept in %s\n", e.dir)
			return
		}
		os.RemoveAll(e.dir)
	})

	// The candidates' client-go logs every failed renewal (the whole API server outage long):
	// into a file, printed on failure, instead of the test output.
	e.klogPath = filepath.Join(e.dir, "client-go.log")
	klogFile, err := os.Create(e.klogPath)
	if err != nil {
		return err
	}
	e.stops = append(e.stops, func() { klogFile.Close() })
	klog.SetSlogLogger(slog.New(slog.NewTextHandler(klogFile, nil)))

	// Build while the control plane starts: both take a while on 2 busy cores.
	type built struct {
		bin string
		err error
	}
	buildDone := make(chan built, 1)
	go func() {
		bin, err := exporterproc.Build(ctx, e.dir)
		buildDone <- built{bin, err}
	}()
	cp, cpErr := controlplane.Start(ctx, controlplane.Options{
		Dir: filepath.Join(e.dir, "controlplane"),
		// By default a SIGTERMed kube-apiserver stops listening at once but keeps open
		// watches until its 60s request timeout, longer than StopAPIServer's 15s grace, so
		// every stop ended in SIGKILL after 15s of a half-dead server that served the
		// exporter's watch but refused the candidates' renewals. With a watch termination
		// grace it closes watches at the SIGTERM and exits within seconds: a clean outage.
		// Coordinated leader election on, so Leases keep spec.strategy and preferredHolder
		// and LeaseCandidates are served (TestAlertsPreferredHolderNotLeading).
		APIServerArgs: []string{"--shutdown-watch-termination-grace-period=2s",
			"--feature-gates=CoordinatedLeaderElection=true", "--runtime-config=coordination.k8s.io/v1beta1=true"},
	})
	b := <-buildDone
	if cp != nil {
		e.cp = cp
		e.stops = append(e.stops, func() { _ = cp.Stop() })
	}
	if err := errors.Join(cpErr, b.err); err != nil {
		return err
	}
	cfg := cp.Config()
	// Dozens of candidates renew every second through this one client; client-go's default
	// 5 QPS would throttle renewals past their deadline and cause failovers of its own.
	cfg.QPS, cfg.Burst = 500, 1000
	if e.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}

	// Every lock kind, so the ConfigMap lock of TestAnnotationLockNoLeader is watched too.
	if e.exporter, err = exporterproc.Start(ctx, b.bin, "--kubeconfig="+cp.KubeconfigPath(), "--locks=leases,configmaps,endpoints"); err != nil {
		return err
	}
	e.stops = append(e.stops, func() { _ = e.exporter.Stop() })
	if err := e.exporter.WaitReady(ctx, 2*time.Minute); err != nil {
		return fmt.Errorf("%w\nexporter log:\n%s", err, e.exporter.Logs())
	}

	rules, err := e.writeRules()
	if err != nil {
		return err
	}
	e.receiver = newReceiver()
	e.stops = append(e.stops, e.receiver.close)
	if e.am, err = promstack.StartAlertmanager(ctx, e.dir, promstack.AlertmanagerOptions{WebhookURL: e.receiver.url()}); err != nil {
		return err
	}
	e.stops = append(e.stops, e.am.Stop)
	if e.prom, err = promstack.StartPrometheus(ctx, e.dir, promstack.PrometheusOptions{
		Targets: []string{e.exporter.Addr()}, RuleFiles: []string{rules}, AlertmanagerURL: e.am.URL,
		ScrapeInterval: scrapeInterval, EvaluationPeriod: time.Second,
	}); err != nil {
		return err
	}
	e.stops = append(e.stops, e.prom.Stop)
	return e.waitScraped(ctx)
}

// writeRules renders the shipped rules through the project's generator (its own flag parser
// and rewrites), changing only `for:` durations, so the tested expressions are the shipped ones.
func (e *environment) writeRules() (string, error) {
	out := filepath.Join(e.dir, "lease-exporter.rules.yml")
	c, err := alerts.ParseArgs([]string{
		"--in", filepath.Join(e.root, "alerts", "lease-exporter.rules.yml"),
		"--out", out, "--format", alerts.FormatRules,
		"--for", "LeaseNoLeader=" + noLeaderFor.String(),
		"--for", "LeaseExporterWatchStale=" + watchStaleFor.String(),
		"--for", "LeaseHolderClockSkew=" + clockSkewFor.String(),
		"--for", "LeasePreferredHolderNotLeading=" + preferredHolderFor.String(),
	}, os.Stderr)
	if err != nil {
		return "", err
	}
	src, err := os.ReadFile(c.In)
	if err != nil {
		return "", err
	}
	b, err := alerts.Generate(src, c.Options)
	if err != nil {
		return "", err
	}
	return out, os.WriteFile(out, b, 0o644)
}

// waitScraped waits until Prometheus has scraped the exporter with a synced cache.
func (e *environment) waitScraped(ctx context.Context) error {
	expr := `lease_exporter_cache_synced{job="` + exporterJobName + `"} == 1`
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && ctx.Err() == nil; {
		if s, err := promQuery(expr); err == nil && len(s) == 1 {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The target's lastError says why (unreachable, unparsable exposition, ...).
	targets, _ := http.Get(e.prom.URL + "/api/v1/targets")
	var body []byte
	if targets != nil {
		body, _ = io.ReadAll(targets.Body)
		targets.Body.Close()
	}
	return fmt.Errorf("prometheus never scraped a synced exporter\ntargets: %s\nprometheus log:\n%s", body, testsuite.Tail(e.prom.Logs(), 30))
}

// teardown stops everything setup started, newest first; it copes with a partial setup.
func (e *environment) teardown() {
	for i := len(e.stops) - 1; i >= 0; i-- {
		e.stops[i]()
	}
}
