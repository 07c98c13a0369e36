package election

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
)

// BuildManager builds hack/tools/crmanager, a controller-runtime manager with leader
// election on as operators run it, with its build.sh and returns the binary. It is a module
// of its own, so controller-runtime never enters the exporter's go.mod; the build is cached,
// and minutes cold.
func BuildManager(ctx context.Context) (string, error) {
	root, err := exporterproc.ModuleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "tools", "crmanager", "build.sh"))
	cmd.Dir = root
	var stderr syncbuffer.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools/crmanager/build.sh: %w\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// Manager is a running controller-runtime manager electing on Namespace/Lease with
// controller-runtime's own elector: holder identity <hostname>_<uuid>, no release when it
// is killed, and by default none on SIGTERM either (LeaderElectionReleaseOnCancel false).
type Manager struct {
	Namespace, Lease string

	addr    string
	cmd     *exec.Cmd
	logs    syncbuffer.Buffer
	done    chan struct{}
	leading atomic.Bool
}

// managerStartTimeout bounds StartManager's wait for /metrics: the manager serves it before
// it contacts the API server, so only a loaded machine makes it slow.
const managerStartTimeout = time.Minute

// managerHTTP bounds every scrape, so that a stuck manager fails the caller's poll.
var managerHTTP = &http.Client{Timeout: 2 * time.Second}

// StartManager runs bin against the API server of kubeconfig with timings tm, its /metrics
// on a free loopback port, and returns once /metrics answers. controller-runtime cannot
// report the port it bound for :0, so the port is picked here; should another process take
// it meanwhile, the manager exits at once and StartManager tries another.
func StartManager(ctx context.Context, bin, kubeconfig, namespace, lease string, tm Timings) (*Manager, error) {
	for attempt := 1; ; attempt++ {
		m, err := startManager(ctx, bin, kubeconfig, namespace, lease, tm)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == 3 {
			return m, err
		}
	}
}

var errPortTaken = errors.New("its metrics port was taken")

func startManager(ctx context.Context, bin, kubeconfig, namespace, lease string, tm Timings) (*Manager, error) {
	port, err := exporterproc.FreePort()
	if err != nil {
		return nil, err
	}
	m := &Manager{Namespace: namespace, Lease: lease, addr: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{})}
	m.cmd = exec.Command(bin, "--kubeconfig", kubeconfig, "--namespace", namespace, "--lease", lease,
		"--metrics-addr", m.addr, "--lease-duration", tm.LeaseDuration.String(),
		"--renew-deadline", tm.RenewDeadline.String(), "--retry-period", tm.RetryPeriod.String())
	m.cmd.Stderr = &m.logs
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := m.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := m.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start controller-runtime manager: %w", err)
	}
	// Wait closes the pipe, so it must wait until read has seen EOF (the process's exit).
	read := make(chan struct{})
	go func() { m.read(out); close(read) }()
	go func() { <-read; _ = m.cmd.Wait(); close(m.done) }()
	if err := m.waitMetrics(ctx); err != nil {
		m.Kill()
		if strings.Contains(m.Logs(), "address already in use") {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return nil, fmt.Errorf("controller-runtime manager for %s/%s: %w; its log:\n%s", namespace, lease, err, m.Logs())
	}
	return m, nil
}

// waitMetrics polls /metrics until it answers 200.
func (m *Manager) waitMetrics(ctx context.Context) error {
	deadline := time.Now().Add(managerStartTimeout)
	last := "no answer yet"
	for time.Now().Before(deadline) {
		resp, err := managerHTTP.Get("http://" + m.addr + "/metrics")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-m.done:
			return fmt.Errorf("exited (%v) before /metrics answered", m.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("/metrics did not answer 200 within %v (last: %s)", managerStartTimeout, last)
}

// read follows the process's stdout: "listening ADDR" once /metrics answers (StartManager
// polls /metrics itself), "leading UNIXNANO" when the manager starts leading.
func (m *Manager) read(out io.Reader) {
	s := bufio.NewScanner(out)
	for s.Scan() {
		if kind, _, _ := strings.Cut(s.Text(), " "); kind == "leading" {
			m.leading.Store(true)
		}
	}
}

// Addr is host:port of its /metrics.
func (m *Manager) Addr() string { return m.addr }

// Done is closed when the process has exited: killed, stopped, or on its own after losing
// its Lease.
func (m *Manager) Done() <-chan struct{} { return m.done }

// Leading reports whether the manager has started leading. It never turns false: a
// controller-runtime manager that loses its Lease exits.
func (m *Manager) Leading() bool { return m.leading.Load() }

// Status scrapes leader_election_master_status{name=Lease}, which controller-runtime's
// metrics registry carries through client-go's leader-election metrics provider.
func (m *Manager) Status() (float64, error) {
	return masterStatus(managerHTTP, m.addr, m.Lease)
}

// Kill ends the manager with SIGKILL, as a crash or an OOM kill would: it does not release
// the Lease. It returns once the process is gone; killing an exited manager is a no-op.
func (m *Manager) Kill() {
	_ = m.cmd.Process.Signal(syscall.SIGKILL)
	<-m.done
}

// Stop ends the manager with SIGTERM, as Kubernetes stops a Pod, and kills it if it has not
// exited within 10 s (controller-runtime's graceful shutdown allows runnables 30 s).
func (m *Manager) Stop() {
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(10 * time.Second):
		m.Kill()
	}
}

// Logs is what the manager logged (controller-runtime's zap logger, on stderr).
func (m *Manager) Logs() string { return m.logs.String() }
