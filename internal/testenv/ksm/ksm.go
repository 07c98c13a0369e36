// Package ksm runs the real kube-state-metrics (hack/tools/ksm/build.sh builds it from the Go
// module proxy) for Leases only: the reference hack/bench measures the exporter's cost against
// and one of the rule sets hack/detect pages with.
package ksm

import (
	"bytes"
	"context"
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
)

// Process is a running kube-state-metrics.
type Process struct {
	URL  string // http://host:port of its /metrics
	cmd  *exec.Cmd
	done chan struct{}
}

// scrapeClient never decompresses, so a scrape moves and measures the bytes Prometheus would.
var scrapeClient = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DisableCompression: true}}

// Build runs hack/tools/ksm/build.sh (cached; minutes cold) and returns the binary.
func Build() (string, error) {
	root, err := exporterproc.ModuleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(filepath.Join(root, "hack/tools/ksm/build.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools/ksm/build.sh: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// Start runs kube-state-metrics for Leases only, with its log in dir, and returns once its
// /metrics shows at least n Leases (its informer has synced).
func Start(ctx context.Context, bin, kubeconfig, dir string, n int) (*Process, error) {
	port, err := exporterproc.FreePort()
	if err != nil {
		return nil, err
	}
	telemetry, err := exporterproc.FreePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "kube-state-metrics.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--kubeconfig="+kubeconfig, "--resources=leases",
		"--host=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--telemetry-host=127.0.0.1", fmt.Sprintf("--telemetry-port=%d", telemetry))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kube-state-metrics: %w", err)
	}
	k := &Process{cmd: cmd, URL: fmt.Sprintf("http://127.0.0.1:%d", port), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(k.done) }()
	start := time.Now()
	for {
		if got, err := k.leases(); err == nil && got >= n {
			return k, nil
		}
		select {
		case <-k.done:
			return nil, fmt.Errorf("kube-state-metrics exited during start; log in %s", logf.Name())
		case <-ctx.Done():
			k.Stop()
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
		if time.Since(start) > 5*time.Minute {
			k.Stop()
			return nil, fmt.Errorf("kube-state-metrics shows fewer than %d Leases after 5m; log in %s", n, logf.Name())
		}
	}
}

// leases counts the kube_lease_owner series of one scrape.
func (k *Process) leases() (int, error) {
	body, err := k.Scrape()
	return bytes.Count(body, []byte("\nkube_lease_owner{")), err
}

// Scrape returns one /metrics body.
func (k *Process) Scrape() ([]byte, error) {
	resp, err := scrapeClient.Get(k.URL + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// Pid is the process's.
func (k *Process) Pid() int { return k.cmd.Process.Pid }

// Stop terminates kube-state-metrics and waits for it; its process group is killed after
// 10 s.
func (k *Process) Stop() {
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
		<-k.done
	}
}
