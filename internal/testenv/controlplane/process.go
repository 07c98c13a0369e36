package controlplane

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// stopGrace is how long Stop waits after SIGTERM before it falls back to
// SIGKILL. kube-apiserver's graceful shutdown finishes well within it.
const stopGrace = 15 * time.Second

// Process is one running control-plane binary. It runs in its own process
// group and is SIGKILLed by the kernel if the Go program that started it
// dies, so a crashed or timed-out test cannot leave it behind.
type Process struct {
	name    string
	logPath string
	port    int
	cmd     *exec.Cmd

	done    chan struct{}
	waitErr error
}

// startProcess launches path with args, appending stdout and stderr to
// logPath (appending, so a restarted process keeps its earlier history).
func startProcess(name, path, logPath string, port int, args []string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log for %s: %w", name, err)
	}
	fmt.Fprintf(logFile, "=== %s starting: %s %q\n", time.Now().Format(time.RFC3339Nano), path, args)

	cmd := exec.Command(path, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Own process group, so Kill/Stop reach anything the binary forks.
		Setpgid: true,
		// Pdeathsig fires when the *thread* that forked the child exits, not
		// the process. The goroutine below locks its OS thread for the
		// child's whole life, so the signal only fires when the whole Go
		// program is gone.
		Pdeathsig: syscall.SIGKILL,
	}

	p := &Process{name: name, logPath: logPath, port: port, cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Unlocked only after the child exited; if this goroutine ended while
		// locked, the runtime would kill the thread and with it the child.
		defer runtime.UnlockOSThread()
		defer logFile.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return p, nil
}

// Name is the label used for the log file, e.g. "kube-scheduler-1".
func (p *Process) Name() string { return p.name }

// PID is the operating-system process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Port is the main port the process listens on (secure port for
// kube-apiserver and components, client port for etcd).
func (p *Process) Port() int { return p.port }

// LogPath is the file that receives the process's stdout and stderr.
func (p *Process) LogPath() string { return p.logPath }

// Logs returns the log file's contents, for printing when a test fails.
func (p *Process) Logs() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.logPath, err)
	}
	return string(b)
}

// Done is closed when the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has already exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill sends SIGKILL to the process group and waits for the exit: an abrupt
// crash that, for a leader, releases nothing, so its Lease must expire.
func (p *Process) Kill() error {
	if p.Exited() {
		return nil
	}
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.done
	return nil
}

// Stop sends SIGTERM, waits for a graceful exit and falls back to SIGKILL
// after stopGrace. Exit statuses caused by the signal are not errors.
func (p *Process) Stop() error {
	if p.Exited() {
		return nil
	}
	if err := p.signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
	}
	if err := p.Kill(); err != nil {
		return err
	}
	return fmt.Errorf("%s ignored SIGTERM for %s and was killed", p.name, stopGrace)
}

// signal targets the whole process group (negative pid).
func (p *Process) signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.cmd.Process.Pid, sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s to %s: %w", sig, p.name, err)
	}
	return nil
}

// exitError describes why a process ended early, with the end of its log.
func (p *Process) exitError() error {
	return fmt.Errorf("%s exited early (%v); last log lines:\n%s", p.name, p.waitErr, Tail(p.Logs(), 30))
}

// StartProcess runs any binary as the control plane runs its own (own process group, killed
// with the test process, output appended to logPath), for the node's kubelet, kube-proxy and
// containerd.
func StartProcess(name, path, logPath string, args []string) (*Process, error) {
	return startProcess(name, path, logPath, 0, args)
}
