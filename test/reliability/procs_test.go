package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// rawExporter runs the binary where exporterproc.Start cannot: with TLS or basic auth its
// anonymous plain-HTTP /healthz poll never gets a 200. Readiness here is "the port accepts".
type rawExporter struct {
	cmd  *exec.Cmd
	addr string
	logs *syncbuffer.Buffer
	done chan struct{}
}

func startRaw(t *testing.T, args ...string) *rawExporter {
	t.Helper()
	port, err := exporterproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	e := &rawExporter{addr: fmt.Sprintf("127.0.0.1:%d", port), logs: &syncbuffer.Buffer{}, done: make(chan struct{})}
	e.cmd = exec.Command(env.Bin, append(args, "--web.listen-address="+e.addr)...)
	e.cmd.Stdout, e.cmd.Stderr = e.logs, e.logs
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.cmd.Wait(); close(e.done) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("===== lease-exporter %s log =====\n%s", strings.Join(args, " "), testsuite.Tail(e.logs.String(), 40))
		}
		_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-e.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
			<-e.done
			t.Error("lease-exporter ignored SIGTERM for 10 s")
		}
	})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-e.done:
			t.Fatalf("lease-exporter exited (%v) before listening:\n%s", e.cmd.ProcessState, e.logs.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", e.addr, time.Second); err == nil {
			c.Close()
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease-exporter not listening on %s within a minute:\n%s", e.addr, e.logs.String())
		}
	}
}

// runBinary runs the exporter to completion (it must exit by itself within a minute) and
// returns its exit code and combined output. attr, if set, replaces the process attributes.
func runBinary(t *testing.T, attr *syscall.SysProcAttr, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.Bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if attr != nil {
		cmd.SysProcAttr = attr
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit) && ctx.Err() == nil:
		return exit.ExitCode(), string(out)
	default:
		t.Fatalf("run lease-exporter %s: %v\n%s", strings.Join(args, " "), err, out)
		return -1, ""
	}
}
