package node

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// reaperEnv marks the test binary re-executed as the reaper.
const reaperEnv = "LEASE_EXPORTER_NODE_REAPER"

// ReaperMain must be the first call of TestMain in every package that starts a node. In the
// reaper (the test binary re-executed by Start) it never returns: it waits until its parent
// test process is gone, however that happened (a failed test, a timeout's panic, SIGKILL),
// and then runs Cleanup. It holds the node lock meanwhile, so the next node cannot start
// before the host is clean. In any other process it returns at once.
func ReaperMain() {
	if os.Getenv(reaperEnv) == "" {
		return
	}
	lock := os.NewFile(3, "node-lock") // inherited: the lock stays held while we clean
	fmt.Println("ready")
	// stdin is a pipe whose only writer is the test process: EOF means it has ended or
	// stopped its node and wants the host clean.
	_, _ = io.Copy(io.Discard, os.Stdin)
	err := Cleanup(func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) })
	if err != nil {
		fmt.Fprintf(os.Stderr, "node reaper: cleanup failed: %v\n", err)
	}
	lock.Close()
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// reaper is the test process's end of a running reaper.
type reaper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func startReaper(lock *os.File) (*reaper, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	cmd.ExtraFiles = []*os.File{lock}
	// A session of its own: a signal to the test's process group does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		if line == "ready\n" {
			return &reaper{cmd: cmd, stdin: stdin}, nil
		}
	case <-time.After(30 * time.Second):
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return nil, fmt.Errorf("the node reaper did not start: call node.ReaperMain() first in this package's TestMain")
}

// finish asks the reaper to clean up and waits for it.
func (r *reaper) finish() error {
	r.stdin.Close()
	if err := r.cmd.Wait(); err != nil {
		return fmt.Errorf("node reaper: %w", err)
	}
	return nil
}
