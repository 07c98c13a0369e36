// Command demo shows lease-exporter working on a machine with no cluster: it starts a local
// control plane, real leader elections and kube-scheduler/kube-controller-manager pairs, the
// exporter, and (when installed) Prometheus and Alertmanager with the shipped rules.
// Ctrl-C stops everything. Run it with `make demo`.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
)

func main() {
	logger := slog.New(newHandler(os.Stderr, slog.LevelInfo))
	// The demo's own election clients log every acquisition attempt; the exporter's view is
	// the point of the demo, so only warnings and errors of client-go get through, and not
	// the errors of the candidates' ordinary races (benignRaces).
	klog.SetSlogLogger(slog.New(benignRaces{newHandler(os.Stderr, slog.LevelWarn)}))
	restore, err := takeTerminal()
	if err != nil {
		logger.Error("cannot take the terminal's foreground: Ctrl-C stops the demo, and make with an error", "err", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err = run(ctx, logger)
	interrupted := ctx.Err() != nil
	stop()
	restore()
	if err != nil {
		if interrupted {
			// Ctrl-C during start-up: what was started is stopped; that is what was asked.
			logger.Info("stopped before the demo was up")
			return
		}
		logger.Error("demo failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, logger *slog.Logger) error {
	dir, err := os.MkdirTemp("", "lease-exporter-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	logger.Info("starting etcd and kube-apiserver")
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: filepath.Join(dir, "controlplane")})
	if err != nil {
		return err
	}
	defer cp.Stop()
	client, err := kubernetes.NewForConfig(cp.Config())
	if err != nil {
		return err
	}

	logger.Info("starting two kube-schedulers and two kube-controller-managers")
	for _, name := range []string{controlplane.KubeScheduler, controlplane.KubeScheduler, controlplane.KubeControllerManager, controlplane.KubeControllerManager} {
		if _, err := cp.StartComponent(ctx, name); err != nil {
			return err
		}
	}
	scenarios, err := startScenarios(ctx, client, logger)
	if err != nil {
		return err
	}
	defer scenarios.stop()

	logger.Info("building and starting lease-exporter")
	bin, err := exporterproc.Build(ctx, dir)
	if err != nil {
		return err
	}
	exp, err := exporterproc.Start(ctx, bin, "--kubeconfig="+cp.KubeconfigPath(), listenArg())
	if err != nil {
		return err
	}
	defer exp.Stop()
	if err := exp.WaitReady(ctx, time.Minute); err != nil {
		return fmt.Errorf("%w\n%s", err, exp.Logs())
	}

	urls := []string{"metrics:      " + exp.URL() + "/metrics", "leases:       " + exp.URL() + "/leases"}
	stack, err := startPromStack(ctx, dir, exp.Addr())
	if err != nil {
		logger.Warn("Prometheus/Alertmanager not started", "err", err)
	} else {
		defer stack.stop()
		urls = append(urls, stack.urls...)
	}
	fmt.Printf("\nlease-exporter demo is running.\n\n")
	for _, u := range urls {
		fmt.Println("  " + u)
	}
	fmt.Printf("  kubeconfig:   %s\n\n  Try:  kubectl --kubeconfig %s get leases -A\n", cp.KubeconfigPath(), cp.KubeconfigPath())
	fmt.Printf("        curl -s %s/metrics | grep -E '^lease_(info|held)'\n\nPress Ctrl-C to stop everything.\n\n", exp.URL())

	select {
	case <-ctx.Done():
	case <-exp.Done():
		return fmt.Errorf("lease-exporter exited unexpectedly:\n%s", exp.Logs())
	}
	logger.Info("stopping")
	return nil
}

// listenArg uses the default port when free, so the printed URL is the documented one.
func listenArg() string {
	addr := "127.0.0.1:10047"
	if l, err := netListen(addr); err == nil {
		l.Close()
		return "--web.listen-address=" + addr
	}
	port, _ := exporterproc.FreePort()
	return fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port)
}

type promStack struct {
	procs []*promstack.Process
	urls  []string
}

func (s *promStack) stop() {
	for _, p := range s.procs {
		p.Stop()
	}
}

// startPromStack starts Alertmanager and Prometheus with alerts/lease-exporter.rules.yml.
func startPromStack(ctx context.Context, dir, target string) (*promStack, error) {
	rules, err := filepath.Abs("alerts/lease-exporter.rules.yml")
	if err != nil {
		return nil, err
	}
	am, err := promstack.StartAlertmanager(ctx, dir, promstack.AlertmanagerOptions{})
	if err != nil {
		return nil, err
	}
	s := &promStack{procs: []*promstack.Process{am}}
	prom, err := promstack.StartPrometheus(ctx, dir, promstack.PrometheusOptions{
		Targets: []string{target}, RuleFiles: []string{rules}, AlertmanagerURL: am.URL,
		ScrapeInterval: 5 * time.Second, EvaluationPeriod: 5 * time.Second,
	})
	if err != nil {
		s.stop()
		return nil, err
	}
	s.procs = append(s.procs, prom)
	s.urls = []string{"prometheus:   " + prom.URL + "/alerts", "alertmanager: " + am.URL}
	return s, nil
}
