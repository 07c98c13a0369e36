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
// leak into another's checks; that lets them run side by side (testsuite's Shared), except the
// API server outage, which runs alone once they have finished (Exclusive).
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
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/mixin"
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
	// missingFor replaces LeaseMissing's 5m.
	missingFor = 20 * time.Second
	// participantFor replaces LeaseSplitBrain's and LeaseLeaderDisagreement's 1m; it still
	// outlasts a paused participant's double leadership (its renew deadline, 3s or 10s).
	participantFor = 20 * time.Second
	// renewStormFor and renewStormWindow replace LeaseRenewStorm's 10m and 5m; the threshold
	// (1 write a second) stays as shipped.
	renewStormFor    = 20 * time.Second
	renewStormWindow = time.Minute
	staleThreshold   = 60 * time.Second // "> 60" in LeaseExporterWatchStale, as shipped
	scrapeInterval   = time.Second
	exporterJobName  = "lease-exporter" // promstack's job name; matches the rules' selector
)

type environment struct {
	*testsuite.Suite
	root     string // repository root
	exporter *exporterproc.Exporter
	prom, am *promstack.Process
	receiver *receiver
	klogPath string   // client-go's log (the in-test leader-election candidates)
	klogFile *os.File // klogPath, open for client-go
	// participants are the targets of the job "participants" (splitbrain_test.go).
	participants *participantTargets
}

var env *environment

// TestMain fails the package when setup fails: missing binaries fail it, never skip it. The
// tests wait far more than they compute (leases expiring, alerts' `for`), so every Shared one
// runs at once; see testsuite.SetParallel.
func TestMain(m *testing.M) {
	testsuite.SetParallel(16)
	os.Exit(testsuite.Main(m, "e2e", &env, setup))
}

func setup(dir string) (_ *environment, err error) {
	for _, bin := range []string{"prometheus", "prometheus-alertmanager"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("%s not found in PATH: install Debian's prometheus and prometheus-alertmanager (hack/deps.sh)", bin)
		}
	}
	e := &environment{}
	if e.root, err = filepath.Abs("../.."); err != nil {
		return nil, err
	}
	// The candidates' client-go logs every failed renewal (the whole API server outage long):
	// into a file, printed on failure, instead of the test output.
	e.klogPath = filepath.Join(dir, "client-go.log")
	if e.klogFile, err = os.Create(e.klogPath); err != nil {
		return nil, err
	}
	klog.SetSlogLogger(slog.New(slog.NewTextHandler(e.klogFile, nil)))
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Teardown(true))
		}
	}()

	// Coordinated leader election on, so Leases keep spec.strategy and preferredHolder and
	// LeaseCandidates are served (TestAlertsPreferredHolderNotLeading).
	if e.Suite, err = testsuite.Start(dir, testsuite.Options{ControlPlane: controlplane.Options{
		// e2e keeps its own shutdown flags, overriding the suite's: watches close at the
		// SIGTERM, before the API server releases its own leader-election-controller Lease on
		// the way out. With the suite's flags the exporter sometimes saw that release, and
		// TestAlertsAPIServerOutage (which asserts no alert during an outage) read a pending
		// LeaseNoLeader for kube-system/leader-election-controller 2 s into it.
		APIServerArgs: []string{"--shutdown-send-retry-after=false", "--shutdown-watch-termination-grace-period=2s",
			"--feature-gates=CoordinatedLeaderElection=true", "--runtime-config=coordination.k8s.io/v1beta1=true"},
	}}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Every lock kind, so the ConfigMap lock of TestAnnotationLockNoLeader is watched too;
	// TestAlertsLeaseMissing's Lease declared.
	if e.exporter, err = e.StartSharedExporter(ctx, "--locks=leases,configmaps,endpoints", "--expect="+missingNS+"/"+missingLease); err != nil {
		return nil, err
	}

	rules, err := e.writeRules(dir)
	if err != nil {
		return nil, err
	}
	e.receiver = newReceiver()
	if e.am, err = promstack.StartAlertmanager(ctx, dir, promstack.AlertmanagerOptions{WebhookURL: e.receiver.url()}); err != nil {
		return nil, err
	}
	if e.participants, err = newParticipantTargets(dir); err != nil {
		return nil, err
	}
	if e.prom, err = promstack.StartPrometheus(ctx, dir, promstack.PrometheusOptions{
		Targets: []string{e.exporter.Addr()}, RuleFiles: []string{rules}, AlertmanagerURL: e.am.URL,
		ScrapeInterval: scrapeInterval, EvaluationPeriod: time.Second, ScrapeConfigs: e.participants.scrapeConfig(),
	}); err != nil {
		return nil, err
	}
	return e, e.waitScraped(ctx)
}

// Teardown stops what setup started, newest first; it copes with a partial setup.
func (e *environment) Teardown(failed bool) error {
	for _, p := range []*promstack.Process{e.prom, e.am} {
		if p != nil {
			p.Stop()
		}
	}
	if e.receiver != nil {
		e.receiver.close()
	}
	var err error
	if e.Suite != nil {
		err = e.Suite.Teardown(failed)
	}
	e.klogFile.Close()
	return err
}

// writeRules renders the mixin's rules with its one renderer, changing only the `for`
// durations (and LeaseRenewStorm's window) through _config as a user would, so the tested
// expressions are the shipped ones.
func (e *environment) writeRules(dir string) (string, error) {
	var override strings.Builder
	override.WriteString("{ alerts+: {")
	for alert, d := range map[string]time.Duration{
		"LeaseNoLeader":                  noLeaderFor,
		"LeaseExporterWatchStale":        watchStaleFor,
		"LeaseHolderClockSkew":           clockSkewFor,
		"LeasePreferredHolderNotLeading": preferredHolderFor,
		"LeaseMissing":                   missingFor,
		"LeaseSplitBrain":                participantFor,
		"LeaseLeaderDisagreement":        participantFor,
	} {
		fmt.Fprintf(&override, " %s+: { 'for': '%s' },", alert, promDuration(d))
	}
	fmt.Fprintf(&override, " LeaseRenewStorm+: { 'for': '%s', window: '%s' },", promDuration(renewStormFor), promDuration(renewStormWindow))
	override.WriteString(" } }")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := mixin.Render(ctx, override.String(), filepath.Join(dir, "mixin"))
	return r.Alerts, err
}

// promDuration writes d as a Prometheus duration in whole minutes ("1m") or seconds ("20s").
func promDuration(d time.Duration) string {
	if d%time.Minute == 0 {
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return strconv.Itoa(int(d/time.Second)) + "s"
}

// waitScraped waits until Prometheus has scraped the exporter with a synced cache.
func (e *environment) waitScraped(ctx context.Context) error {
	expr := `lease_exporter_cache_synced{job="` + exporterJobName + `"} == 1`
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && ctx.Err() == nil; {
		if s, err := e.promQuery(expr); err == nil && len(s) == 1 {
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
