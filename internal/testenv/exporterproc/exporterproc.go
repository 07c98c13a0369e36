// Package exporterproc builds and runs the real lease-exporter binary as a separate process,
// the way it runs in production, for integration tests, benchmarks and the demo.
package exporterproc

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
)

// Build compiles ./cmd/lease-exporter with hack/build.sh (the release build) into dir.
func Build(ctx context.Context, dir string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "lease-exporter")
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "build.sh"), out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build lease-exporter: %w\n%s", err, b)
	}
	return out, nil
}

// BuildRace compiles ./cmd/lease-exporter with the race detector into dir. The release build
// is static (CGO_ENABLED=0), which -race cannot be, so this is the one build that bypasses
// hack/build.sh.
func BuildRace(ctx context.Context, dir string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "lease-exporter-race")
	cmd := exec.CommandContext(ctx, "go", "build", "-race", "-o", out, "./cmd/lease-exporter")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -race: %w\n%s", err, b)
	}
	return out, nil
}

// ModuleRoot is the lease-exporter checkout the caller (a test) runs in, for its scripts.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside the lease-exporter module")
	}
	return filepath.Dir(gomod), nil
}

// Exporter is a running lease-exporter process.
type Exporter struct {
	cmd  *exec.Cmd
	addr string
	logs *syncbuffer.Buffer
	done chan struct{}
	err  error
}

// Start runs bin with args plus --web.listen-address on a free loopback port (unless args
// set one), and waits until /healthz answers and the start-up checks are over. The process is killed if the caller dies.
func Start(ctx context.Context, bin string, args ...string) (*Exporter, error) {
	return StartWithEnv(ctx, bin, nil, args...)
}

// StartWithEnv is Start with env (KEY=value) added to the inherited environment.
func StartWithEnv(ctx context.Context, bin string, env []string, args ...string) (*Exporter, error) {
	addr := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--web.listen-address="); ok {
			addr = v
		}
	}
	if addr == "" {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		addr = fmt.Sprintf("127.0.0.1:%d", port)
		args = append(args, "--web.listen-address="+addr)
	}
	e := &Exporter{addr: addr, logs: &syncbuffer.Buffer{}, done: make(chan struct{})}
	e.cmd = exec.Command(bin, args...)
	e.cmd.Stdout, e.cmd.Stderr = e.logs, e.logs
	if len(env) > 0 {
		e.cmd.Env = append(os.Environ(), env...)
	}
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := e.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { e.err = e.cmd.Wait(); close(e.done) }()
	if err := e.waitHTTP(ctx, "/healthz", 30*time.Second); err != nil {
		e.Kill()
		return nil, fmt.Errorf("%w\nexporter log:\n%s", err, e.Logs())
	}
	if err := e.waitStarted(ctx, time.Minute); err != nil {
		e.Kill()
		return nil, fmt.Errorf("%w\nexporter log:\n%s", err, e.Logs())
	}
	return e, nil
}

// waitStarted waits until the start-up checks are over. /healthz answers as soon as the
// process runs; until the checks pass, every route that reads the cache answers 503 with a
// body that starts "starting:", and a test that scrapes right after Start would read that.
// Any other answer (the metrics, a 401 behind basic auth) means the checks are over.
func (e *Exporter) waitStarted(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-e.done:
			return fmt.Errorf("lease-exporter exited (%v) during its start-up checks", e.err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := httpClient.Get(e.URL() + "/metrics")
		if err != nil {
			return fmt.Errorf("/metrics after /healthz answered: %w", err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(string(body), "starting:") {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the start-up checks were not over within %s", timeout)
}

// URL returns the base URL, e.g. http://127.0.0.1:12345.
func (e *Exporter) URL() string { return "http://" + e.addr }

// Addr returns host:port.
func (e *Exporter) Addr() string { return e.addr }

// Pid is the exporter's process id (for /proc measurements).
func (e *Exporter) Pid() int { return e.cmd.Process.Pid }

// Logs returns everything the process wrote so far.
func (e *Exporter) Logs() string { return e.logs.String() }

// Done is closed when the process has exited.
func (e *Exporter) Done() <-chan struct{} { return e.done }

// ExitCode returns the exit code once Done is closed (-1 if killed by a signal).
func (e *Exporter) ExitCode() int { return e.cmd.ProcessState.ExitCode() }

// WaitReady waits until /readyz answers 200.
func (e *Exporter) WaitReady(ctx context.Context, timeout time.Duration) error {
	return e.waitHTTP(ctx, "/readyz", timeout)
}

func (e *Exporter) waitHTTP(ctx context.Context, path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		select {
		case <-e.done:
			return fmt.Errorf("lease-exporter exited (%v) before %s answered", e.err, path)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := httpClient.Get(e.URL() + path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer 200 within %s (last: %s)", path, timeout, last)
}

// Stop sends SIGTERM and waits up to 10s, then kills.
func (e *Exporter) Stop() error {
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
		return nil
	case <-time.After(10 * time.Second):
		e.Kill()
		return fmt.Errorf("lease-exporter did not exit within 10s of SIGTERM")
	}
}

// Kill ends the process and its group at once.
func (e *Exporter) Kill() {
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	<-e.done
}

// httpClient bounds every request: a hung exporter must fail the caller's poll with a
// message, not block it until the go test timeout kills everything without diagnostics.
var httpClient = &http.Client{Timeout: 10 * time.Second}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
