package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/ksm"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// environment is everything the faults share: one control plane, the exporter (two replicas), one
// kube-state-metrics, one Prometheus holding the three rule sets and one Alertmanager whose
// webhook is the receiver.
type environment struct {
	dir   string
	suite *testsuite.Suite
	// exporters are the chart's default deployment: two replicas, which the rules tell apart
	// by instance and aggregate away. exporterArgs are each replica's flags.
	exporters    []*exporterproc.Exporter
	exporterArgs [][]string
	ksm          *ksm.Process
	am, prom     *promstack.Process
	recv         *receiver
	targets      *promstack.FileTargets // the electors' own /metrics, as Pods (trial.go)
	participant  string                 // the client-go participant binary
	manager      string                 // the controller-runtime manager binary
	settings     Settings
}

// checkTools names what provides each outside program before anything starts.
func checkTools(smoke bool) error {
	var missing []string
	for bin, from := range map[string]string{
		"prometheus":              "Debian's prometheus (hack/deps.sh)",
		"prometheus-alertmanager": "Debian's prometheus-alertmanager (hack/deps.sh)",
	} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin+": install "+from)
		}
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		missing = append(missing, "KUBEBUILDER_ASSETS is unset: run through make bench-alerts, or set it to $(hack/deps.sh | tail -1)")
	}
	if !smoke {
		if err := election.CheckPython(true); err != nil {
			missing = append(missing, err.Error())
		}
	}
	if len(missing) > 0 {
		return errors.New("missing components:\n  " + strings.Join(missing, "\n  "))
	}
	return nil
}

// start brings the environment up in dir; on error it has stopped what it started.
func start(ctx context.Context, dir string, s Settings, expect []string, short, manager bool) (_ *environment, err error) {
	e := &environment{dir: dir, settings: s, recv: newReceiver()}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	// The coordinated election's fault needs the API server to serve LeaseCandidates and keep
	// spec.strategy and preferredHolder (CoordinatedLeaderElection).
	if e.suite, err = testsuite.Start(dir, testsuite.Options{ControlPlane: controlplane.Options{
		APIServerArgs: []string{"--feature-gates=CoordinatedLeaderElection=true", "--runtime-config=coordination.k8s.io/v1beta1=true"},
	}}); err != nil {
		return nil, err
	}
	if e.participant, err = election.BuildParticipant(ctx, dir); err != nil {
		return nil, err
	}
	if manager {
		if e.manager, err = election.BuildManager(ctx); err != nil {
			return nil, fmt.Errorf("%w (hack/tools/crmanager/build.sh builds it)", err)
		}
	}
	ksmBin, err := ksm.Build()
	if err != nil {
		return nil, err
	}
	if e.ksm, err = ksm.Start(ctx, ksmBin, e.suite.CP.KubeconfigPath(), dir, 0); err != nil {
		return nil, err
	}
	// Every lock kind the electors use (the Python client's ConfigMapLock) and the lock the
	// missing-lock fault deletes; a fixed port per replica, so a restart keeps its scrape
	// target.
	var targets []string
	for range 2 {
		port, err := exporterproc.FreePort()
		if err != nil {
			return nil, err
		}
		args := []string{"--kubeconfig=" + e.suite.CP.KubeconfigPath(), "--locks=leases,configmaps",
			fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port)}
		for _, x := range expect {
			args = append(args, "--expect="+x)
		}
		e.exporterArgs = append(e.exporterArgs, args)
		e.exporters = append(e.exporters, nil)
		targets = append(targets, fmt.Sprintf("127.0.0.1:%d", port))
	}
	for i := range e.exporters {
		if err := e.startExporter(ctx, i); err != nil {
			return nil, err
		}
	}
	rules, err := writeRuleSets(ctx, dir, short)
	if err != nil {
		return nil, err
	}
	if e.am, err = promstack.StartAlertmanager(ctx, dir, promstack.AlertmanagerOptions{WebhookURL: e.recv.url()}); err != nil {
		return nil, err
	}
	if e.targets, err = promstack.NewFileTargets(filepath.Join(dir, "electors.json")); err != nil {
		return nil, err
	}
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	if e.prom, err = promstack.StartPrometheus(ctx, dir, promstack.PrometheusOptions{
		Targets: targets, RuleFiles: rules, AlertmanagerURL: e.am.URL,
		ScrapeInterval: sec(s.ScrapeIntervalSeconds), EvaluationPeriod: sec(s.EvaluationIntervalSeconds),
		ScrapeConfigs: fmt.Sprintf("  - job_name: kube-state-metrics\n    static_configs: [{targets: [%q]}]\n", strings.TrimPrefix(e.ksm.URL, "http://")) +
			e.targets.ScrapeConfig("electors"),
	}); err != nil {
		return nil, err
	}
	return e, nil
}

// startExporter runs replica i, the release build with its flags, and waits until ready.
func (e *environment) startExporter(ctx context.Context, i int) error {
	exp, err := exporterproc.Start(ctx, e.suite.Bin, e.exporterArgs[i]...)
	if err != nil {
		return err
	}
	if err := exp.WaitReady(ctx, 2*time.Minute); err != nil {
		exp.Kill()
		return fmt.Errorf("lease-exporter replica %d not ready: %w\n%s", i, err, exp.Logs())
	}
	e.exporters[i] = exp
	return nil
}

// stop ends everything, newest first; it copes with a partial start.
func (e *environment) stop() {
	for _, p := range []*promstack.Process{e.prom, e.am} {
		if p != nil {
			p.Stop()
		}
	}
	for _, exp := range e.exporters {
		if exp != nil {
			_ = exp.Stop()
		}
	}
	if e.ksm != nil {
		e.ksm.Stop()
	}
	e.recv.close()
	if e.suite != nil {
		_ = e.suite.Teardown(false)
	}
}
