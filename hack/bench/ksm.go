package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// ksmProc is a running kube-state-metrics, the reference the -prometheus mode compares
// the exporter's metric sets with.
type ksmProc struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
}

// buildKSM runs hack/tools/ksm/build.sh (cached; minutes cold) and returns the binary.
func buildKSM() (string, error) {
	cmd := exec.Command("hack/tools/ksm/build.sh")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools/ksm/build.sh (run from the repository root): %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// startKSM runs kube-state-metrics for Leases only, with its log in dir, and returns once
// its /metrics shows at least n Leases (its informer has synced).
func startKSM(ctx context.Context, bin, kubeconfig, dir string, n int) (*ksmProc, error) {
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
	k := &ksmProc{cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d", port), done: make(chan struct{})}
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
			k.stop()
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
		if time.Since(start) > 5*time.Minute {
			k.stop()
			return nil, fmt.Errorf("kube-state-metrics shows fewer than %d Leases after 5m; log in %s", n, logf.Name())
		}
	}
}

// leases counts the kube_lease_owner series of one scrape.
func (k *ksmProc) leases() (int, error) {
	body, err := k.scrape()
	return bytes.Count(body, []byte("\nkube_lease_owner{")), err
}

func (k *ksmProc) scrape() ([]byte, error) {
	resp, err := scrapeClient.Get(k.url + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func (k *ksmProc) pid() int { return k.cmd.Process.Pid }

// stop terminates kube-state-metrics and waits for it; its process group is killed after
// 10 s.
func (k *ksmProc) stop() {
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
		<-k.done
	}
}
