package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// env is shared by every test: a control plane takes seconds to start and two builds of the
// exporter take a minute cold. Tests run one after another (none calls t.Parallel) because
// several stop or restart the shared kube-apiserver and etcd; each test works in its own
// namespace and runs its own exporter scoped to it.
var env *testEnv

type testEnv struct {
	cp     *controlplane.ControlPlane
	client kubernetes.Interface // admin
	// bin is the release build (hack/build.sh); raceBin the same command built with -race.
	bin, raceBin string
	dir          string
}

// TestMain fails the package, never skips it, when KUBEBUILDER_ASSETS is missing: a silently
// skipped fault suite proves nothing.
func TestMain(m *testing.M) {
	os.Exit(testsuite.Main(m, "reliability", &env, setup))
}

// Teardown stops the control plane, after printing its processes' logs if a test failed.
func (e *testEnv) Teardown(failed bool) error {
	if failed {
		for _, p := range e.cp.Processes() {
			fmt.Fprintf(os.Stderr, "===== %s log (last 40 lines) =====\n%s\n", p.Name(), testsuite.Tail(p.Logs(), 40))
		}
	}
	return e.cp.Stop()
}

// setup builds both binaries while the control plane starts: the compiler and etcd plus
// kube-apiserver mostly wait on different things.
func setup(dir string) (_ *testEnv, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	e := &testEnv{dir: dir}
	builds := make(chan error, 2)
	go func() {
		var err error
		e.bin, err = exporterproc.Build(ctx, dir)
		builds <- err
	}()
	go func() {
		var err error
		e.raceBin, err = buildRace(ctx, filepath.Join(dir, "lease-exporter-race"))
		builds <- err
	}()
	e.cp, err = controlplane.Start(ctx, controlplane.Options{
		Dir: filepath.Join(dir, "controlplane"),
		// By default kube-apiserver's graceful shutdown waits up to 60 s for open watches
		// (the exporter's) to end, and the harness kills it after 15 s. With this flag it
		// answers 429 while draining, then gives open connections 2 s: outages start promptly.
		APIServerArgs: []string{"--shutdown-send-retry-after=true"},
	})
	buildErr := errors.Join(<-builds, <-builds)
	if err != nil {
		return nil, errors.Join(err, buildErr)
	}
	if buildErr != nil {
		return nil, errors.Join(buildErr, e.cp.Stop())
	}
	cfg := e.cp.Config()
	// Bulk creation of 10k Leases must not wait on client-side throttling.
	cfg.QPS, cfg.Burst = 1000, 2000
	if e.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, errors.Join(fmt.Errorf("admin client: %w", err), e.cp.Stop())
	}
	return e, nil
}

// buildRace builds the command with the race detector. The release build is static
// (CGO_ENABLED=0), which -race cannot be, so this is the one build that bypasses hack/build.sh.
func buildRace(ctx context.Context, out string) (string, error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-race", "-o", out, "./cmd/lease-exporter")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -race: %w\n%s", err, b)
	}
	return out, nil
}

// startExporter runs bin with flags, stops it (SIGTERM) when the test ends and prints its log
// if the test failed. It does not wait for readiness: some tests start it without RBAC.
func startExporter(t *testing.T, bin string, flags ...string) *exporterproc.Exporter {
	t.Helper()
	exp, err := exporterproc.Start(context.Background(), bin, flags...)
	if err != nil {
		t.Fatalf("start lease-exporter %s: %v", strings.Join(flags, " "), err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("===== lease-exporter %s log (last 80 lines) =====\n%s", strings.Join(flags, " "), testsuite.Tail(exp.Logs(), 80))
		}
		select {
		case <-exp.Done():
		default:
			if err := exp.Stop(); err != nil {
				t.Errorf("stop lease-exporter: %v", err)
			}
		}
	})
	return exp
}

// startReady is startExporter with the admin kubeconfig, scoped to namespace, waiting until
// its cache has synced.
func startReady(t *testing.T, bin, namespace string, flags ...string) *exporterproc.Exporter {
	t.Helper()
	flags = append([]string{"--kubeconfig=" + env.cp.KubeconfigPath(), "--namespaces=" + namespace}, flags...)
	exp := startExporter(t, bin, flags...)
	if err := exp.WaitReady(context.Background(), 2*time.Minute); err != nil {
		t.Fatalf("lease-exporter not ready: %v", err)
	}
	return exp
}
