//go:build release

package thanos_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/mixin"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// cluster is one of the fleet's clusters: its own API server with an election and an exporter,
// its own Prometheus (external_labels {cluster: name}) and a Thanos sidecar in front of it.
type cluster struct {
	name    string
	pool    *election.Pool
	prom    *promstack.Process
	sidecar string // the sidecar's gRPC address, a Thanos Query endpoint
	bin     string // the exporter's release build
}

// The Lease every cluster elects through.
const leaseNS, leaseName = "default", "ctrl"

// thanosBin returns the Thanos binary hack/thanos/build.sh built: a no-op once cached, else it
// waits for the build `make test-release` runs beside the suites, or builds it.
func thanosBin(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(tools.RepoRoot(t), "hack", "thanos", "build.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/thanos/build.sh (it builds Thanos from the Go module proxy): %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return filepath.Join(lines[len(lines)-1], "thanos")
}

// renderMixin renders the mixin in multi-cluster mode with override into dir and returns the
// rule file and dashboards dir.
func renderMixin(t *testing.T, dir, override string) (rules, dashboards string) {
	t.Helper()
	r, err := mixin.Render(t.Context(), override, dir)
	if err != nil {
		t.Fatal(err)
	}
	return r.Alerts, r.Dashboards
}

// startCluster brings one cluster up, torn down in t.Cleanup. exporterBin is a release build
// to reuse; empty, the cluster builds one (cluster.bin).
func startCluster(t *testing.T, name, exporterBin, thanos, rules string) *cluster {
	t.Helper()
	ctx := context.Background()
	s := testsuite.StartForTest(t, testsuite.Options{Bin: exporterBin})
	c := &cluster{name: name, bin: s.Bin}
	var err error
	// Two candidates with short timings: the one leading can be stopped for a failover.
	if c.pool, err = election.StartPool(ctx, s.Client, leaseNS, leaseName, name+"-ctrl", 2, election.Fast, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.pool.StopAll)
	exp := s.StartReady(t, s.Bin)

	dir := t.TempDir()
	c.prom, err = promstack.StartPrometheus(ctx, dir, promstack.PrometheusOptions{
		Targets:          []string{exp.Addr()},
		RuleFiles:        []string{rules},
		ScrapeInterval:   time.Second,
		EvaluationPeriod: time.Second,
		ExternalLabels:   map[string]string{"cluster": name},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("prometheus %s log:\n%s", name, controlplane.Tail(c.prom.Logs(), 30))
		}
		c.prom.Stop()
	})
	c.sidecar, _ = startThanos(t, thanos, "sidecar-"+name, dir, "sidecar",
		"--prometheus.url="+c.prom.URL, "--tsdb.path="+filepath.Join(dir, "prom-data"))
	return c
}

// startThanos runs `thanos COMPONENT` on free loopback ports until t ends, waits until it is
// ready, and returns its gRPC address and HTTP base URL.
func startThanos(t *testing.T, bin, name, dir, component string, args ...string) (grpcAddr, httpURL string) {
	t.Helper()
	grpc, httpAddr := freeAddr(t), freeAddr(t)
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, append([]string{component, "--grpc-address=" + grpc, "--http-address=" + httpAddr}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("thanos %s log:\n%s", name, controlplane.Tail(string(b), 30))
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	eventually(t, time.Minute, "thanos "+name+" ready", func() (bool, string) {
		resp, err := http.Get("http://" + httpAddr + "/-/ready")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return grpc, "http://" + httpAddr
}

func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := exporterproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// eventually polls cond every second (Thanos answers from its stores within one) until it holds.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	testsuite.Eventually(t, timeout, time.Second, what, cond)
}
