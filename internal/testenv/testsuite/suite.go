package testsuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// Options configures Start. The zero value is ready to use.
type Options struct {
	// ControlPlane is passed to controlplane.Start. Dir defaults to <dir>/controlplane; its
	// APIServerArgs come after the suite's shutdown flags (outageArgs) and may override them.
	ControlPlane controlplane.Options
	// RaceBuild also builds the command with the race detector, into Suite.RaceBin.
	RaceBuild bool
	// Bin is a release build to use instead of building one: a test with several control
	// planes (test/thanos' clusters) builds once.
	Bin string
	// Timeout bounds the builds and the control plane's start-up. Defaults to 8 minutes: a
	// cold -race build on a busy 2-core machine takes several.
	Timeout time.Duration
}

// Suite is what the tests of a suite package share: a control plane takes seconds to start
// and a cold build of the release binary about a minute, so tests isolate themselves by
// namespace instead of by cluster. Its methods are safe for parallel tests.
type Suite struct {
	// Dir holds everything the run writes (testsuite.Main's directory).
	Dir string
	CP  *controlplane.ControlPlane
	// Client is an admin client whose rate limit (1000 QPS, burst 2000) never throttles: a
	// dozen candidates renewing each second, or bulk creation of 10k Leases, share it, and
	// client-go's default (5 QPS) would make them miss renew deadlines or crawl.
	Client kubernetes.Interface
	// Bin is the release build (hack/build.sh), exactly as shipped; RaceBin the same command
	// built with -race, when Options.RaceBuild asked for it.
	Bin, RaceBin string

	mu     sync.Mutex
	shared []*exporterproc.Exporter // StartSharedExporter's, for Teardown
	// running counts the Shared tests not yet finished; Exclusive tests wait for it.
	running sync.WaitGroup
}

// Start builds the exporter while the control plane starts, in dir: both are slow and mostly
// wait on different things (the compiler versus etcd and kube-apiserver start-up). On error
// it has stopped whatever it started.
func Start(dir string, opts Options) (_ *Suite, err error) {
	if opts.Timeout == 0 {
		opts.Timeout = 8 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	s := &Suite{Dir: dir, Bin: opts.Bin}
	var builds []func() error
	if s.Bin == "" {
		builds = append(builds, func() (err error) { s.Bin, err = exporterproc.Build(ctx, dir); return err })
	}
	if opts.RaceBuild {
		builds = append(builds, func() (err error) { s.RaceBin, err = exporterproc.BuildRace(ctx, dir); return err })
	}
	built := make(chan error, len(builds))
	for _, b := range builds {
		go func() { built <- b() }()
	}
	waitBuilds := func() error {
		var errs []error
		for range builds {
			errs = append(errs, <-built)
		}
		return errors.Join(errs...)
	}

	cpOpts := opts.ControlPlane
	if cpOpts.Dir == "" {
		cpOpts.Dir = filepath.Join(dir, "controlplane")
	}
	cpOpts.APIServerArgs = append(append([]string{}, outageArgs...), cpOpts.APIServerArgs...)
	if s.CP, err = controlplane.Start(ctx, cpOpts); err != nil {
		// Start has cleaned up after itself. Stop the builds too: their "killed" errors would
		// only bury the real reason (typically KUBEBUILDER_ASSETS not set).
		cancel()
		_ = waitBuilds()
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.CP.Stop())
		}
	}()
	if err := waitBuilds(); err != nil {
		return nil, err
	}
	cfg := s.CP.Config()
	cfg.QPS, cfg.Burst = 1000, 2000
	if s.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	return s, nil
}

// StartForTest is Start for a single test, in a directory of its own: a test that needs a
// control plane of its own (test/deploy's) or several (test/thanos' clusters). Teardown runs
// in t.Cleanup, told whether t failed; a failed start fails t, never skips it.
func StartForTest(t testing.TB, opts Options) *Suite {
	t.Helper()
	s, err := Start(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("start the control plane and the exporter build: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Teardown(t.Failed()); err != nil {
			t.Errorf("teardown: %v", err)
		}
	})
	return s
}

// Teardown stops the shared exporters and the control plane, after printing their logs if a
// test failed, so a CI log alone shows what the API server and the exporter were doing.
func (s *Suite) Teardown(failed bool) error {
	s.mu.Lock()
	shared := s.shared
	s.mu.Unlock()
	if failed {
		for _, e := range shared {
			fmt.Fprintf(os.Stderr, "===== shared lease-exporter log (last 80 lines) =====\n%s\n", Tail(e.Logs(), 80))
		}
		for _, p := range s.CP.Processes() {
			fmt.Fprintf(os.Stderr, "===== %s log (last 40 lines) =====\n%s\n", p.Name(), Tail(p.Logs(), 40))
		}
	}
	var errs []error
	for _, e := range shared {
		errs = append(errs, e.Stop())
	}
	return errors.Join(append(errs, s.CP.Stop())...)
}

// StartSharedExporter runs the release binary against the control plane (admin kubeconfig)
// with flags, for every test of the package, and waits until its cache has synced, since
// before that it deliberately exports no Lease series at all. Teardown stops it and prints
// its log if a test failed.
func (s *Suite) StartSharedExporter(ctx context.Context, flags ...string) (*exporterproc.Exporter, error) {
	exp, err := s.startReady(ctx, s.Bin, flags)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.shared = append(s.shared, exp)
	s.mu.Unlock()
	return exp, nil
}

// StartExporter runs bin with exactly flags for t: stopped (SIGTERM) when t ends unless it
// has exited, and its log printed if t failed. It does not wait for readiness: some tests
// start it without RBAC, or to see it exit.
func (s *Suite) StartExporter(t testing.TB, bin string, flags ...string) *exporterproc.Exporter {
	t.Helper()
	exp, err := exporterproc.Start(context.Background(), bin, flags...)
	if err != nil {
		t.Fatalf("start lease-exporter %s: %v", describe(flags), err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("===== lease-exporter %s log (last 80 lines) =====\n%s", describe(flags), Tail(exp.Logs(), 80))
		}
		select {
		case <-exp.Done():
		default:
			if err := exp.Stop(); err != nil {
				t.Errorf("stop lease-exporter %s: %v", describe(flags), err)
			}
		}
	})
	return exp
}

// StartReady is StartExporter with the admin kubeconfig, waiting until the cache has synced.
func (s *Suite) StartReady(t testing.TB, bin string, flags ...string) *exporterproc.Exporter {
	t.Helper()
	exp := s.StartExporter(t, bin, append([]string{"--kubeconfig=" + s.CP.KubeconfigPath()}, flags...)...)
	if err := exp.WaitReady(context.Background(), readyTimeout); err != nil {
		t.Fatalf("lease-exporter %s not ready: %v", describe(flags), err)
	}
	return exp
}

// readyTimeout covers a cold start of the exporter on the shared 2-core machine.
const readyTimeout = 2 * time.Minute

func (s *Suite) startReady(ctx context.Context, bin string, flags []string) (*exporterproc.Exporter, error) {
	exp, err := exporterproc.Start(ctx, bin, append([]string{"--kubeconfig=" + s.CP.KubeconfigPath()}, flags...)...)
	if err != nil {
		return nil, fmt.Errorf("start lease-exporter %s: %w", describe(flags), err)
	}
	if err := exp.WaitReady(ctx, readyTimeout); err != nil {
		exp.Kill()
		return nil, fmt.Errorf("lease-exporter %s not ready: %w\nexporter log:\n%s", describe(flags), err, exp.Logs())
	}
	return exp, nil
}

func describe(flags []string) string {
	if len(flags) == 0 {
		return "(default flags)"
	}
	return strings.Join(flags, " ")
}
