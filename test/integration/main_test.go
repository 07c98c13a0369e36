package integration_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// env is shared by every test in the package: a control plane takes seconds to start and a
// cold build of the release binary about a minute, so tests isolate themselves by namespace
// instead of by cluster.
var env *testEnv

type testEnv struct {
	cp     *controlplane.ControlPlane
	client kubernetes.Interface
	// bin is the lease-exporter binary built by hack/build.sh, exactly as released.
	bin string
	// exp watches every namespace with default flags, like a cluster-wide deployment.
	exp *exporterproc.Exporter
	// version is kube-apiserver's, e.g. v1.34.4.
	version string
}

// TestMain sets up the shared environment. A missing KUBEBUILDER_ASSETS makes the package
// FAIL (exit 1 with the reason), never skip: a silently skipped end-to-end suite proves nothing.
func TestMain(m *testing.M) {
	os.Exit(testsuite.Main(m, "integration", &env, setup))
}

// Teardown stops the shared exporter and control plane, after printing their logs if a test
// failed.
func (e *testEnv) Teardown(failed bool) error {
	if failed {
		dumpLogs(e)
	}
	return errors.Join(e.exp.Stop(), e.cp.Stop())
}

// setup builds the binary while the control plane starts: both are slow and mostly wait on
// different things (the compiler versus etcd and kube-apiserver start-up).
func setup(dir string) (_ *testEnv, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	var bin string
	var buildErr error
	built := make(chan struct{})
	go func() {
		defer close(built)
		bin, buildErr = exporterproc.Build(ctx, dir)
	}()
	// The audit log records every list and watch of Leases, so tests can see from the API
	// server how an exporter read them (TestInitialSyncIsStreamingList).
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Dir: filepath.Join(dir, "controlplane"), AuditPolicy: controlplane.AuditLeaseReads,
	})
	if err != nil {
		// Start has cleaned up after itself. Stop the build too: its "killed" error would
		// only bury the real reason (typically KUBEBUILDER_ASSETS not set).
		cancel()
		<-built
		return nil, err
	}
	<-built
	if buildErr != nil {
		return nil, errors.Join(buildErr, cp.Stop())
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, cp.Stop())
		}
	}()

	// Every candidate of every test shares this client. client-go's default limit (5 QPS,
	// burst 10) would throttle a dozen candidates renewing each second into missing their
	// renew deadlines, which is not what the tests are about.
	cfg := cp.Config()
	cfg.QPS, cfg.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	version, err := client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("server version: %w", err)
	}
	// The suite runs once per Kubernetes version of the matrix (see the Makefile's test
	// target); the log says which.
	fmt.Fprintf(os.Stderr, "integration: kube-apiserver %s, etcd %s (KUBEBUILDER_ASSETS=%s)\n",
		version.GitVersion, cp.EtcdVersion(), cp.AssetsDir())
	// Every family, so each is checked against the API server; the default set has its own
	// test (TestDefaultSeriesSet).
	exp, err := startExporter(ctx, bin, cp, "--metrics.extended")
	if err != nil {
		return nil, err
	}
	return &testEnv{cp: cp, client: client, bin: bin, exp: exp, version: version.GitVersion}, nil
}

// startExporter runs the binary against cp with extra flags and waits until its cache has
// synced, since before that it deliberately exports no Lease series at all.
func startExporter(ctx context.Context, bin string, cp *controlplane.ControlPlane, flags ...string) (*exporterproc.Exporter, error) {
	args := append([]string{"--kubeconfig=" + cp.KubeconfigPath()}, flags...)
	exp, err := exporterproc.Start(ctx, bin, args...)
	if err != nil {
		return nil, fmt.Errorf("start lease-exporter %s: %w", strings.Join(flags, " "), err)
	}
	if err := exp.WaitReady(ctx, 60*time.Second); err != nil {
		exp.Kill()
		return nil, fmt.Errorf("lease-exporter %s not ready: %w\nexporter log:\n%s", strings.Join(flags, " "), err, exp.Logs())
	}
	return exp, nil
}

// startTestExporter is startExporter for one test: it is stopped when the test ends, and its
// log is printed if the test failed.
func startTestExporter(t *testing.T, flags ...string) *exporterproc.Exporter {
	t.Helper()
	desc := strings.Join(flags, " ")
	if desc == "" {
		desc = "(default flags)"
	}
	exp, err := startExporter(context.Background(), env.bin, env.cp, flags...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("===== lease-exporter %s log =====\n%s", desc, testsuite.Tail(exp.Logs(), 60))
		}
		if err := exp.Stop(); err != nil {
			t.Errorf("stop lease-exporter %s: %v", desc, err)
		}
	})
	return exp
}

// dumpLogs prints the shared processes' logs after a failure, so a CI log alone shows what
// the API server and the exporter were doing.
func dumpLogs(e *testEnv) {
	fmt.Fprintf(os.Stderr, "===== shared lease-exporter log (last 80 lines) =====\n%s\n", testsuite.Tail(e.exp.Logs(), 80))
	for _, p := range e.cp.Processes() {
		if p.Name() == "etcd" || p.Name() == "kube-apiserver" {
			fmt.Fprintf(os.Stderr, "===== %s log (last 40 lines) =====\n%s\n", p.Name(), testsuite.Tail(p.Logs(), 40))
		}
	}
}
