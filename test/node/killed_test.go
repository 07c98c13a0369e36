//go:build release

package node_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/node"
	coordinationv1 "k8s.io/api/coordination/v1"
)

const killedEnv = "LEASE_EXPORTER_NODE_TEST_KILLED"

// TestKilledTestLeavesTheHostAsItWas runs a node in a child test process, SIGKILLs that
// process once an elector Pod holds its Lease (no deferred function, no t.Cleanup runs), and
// checks that the reaper restored the host: the next node's lock is free only then.
func TestKilledTestLeavesTheHostAsItWas(t *testing.T) {
	if os.Getenv(killedEnv) != "" {
		runNodeUntilKilled(t)
		return
	}
	before, err := node.SnapshotHost()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledTestLeavesTheHostAsItWas$", "-test.v")
	// The child's t.TempDir()s (the elector image, ~50 MB) live under the parent's: killed, it
	// never removes them itself, and the parent's cleanup does.
	cmd.Env = append(os.Environ(), killedEnv+"=1", "TMPDIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	buf := make([]byte, 4096)
	deadline := time.Now().Add(5 * time.Minute)
	for !strings.Contains(log.String(), "NODE-RUNNING") {
		k, err := out.Read(buf)
		log.Write(buf[:k])
		if err != nil || time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("child never ran its node (%v):\n%s", err, log.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The reaper holds the lock until the host is clean.
	lock, err := os.OpenFile(node.LockPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	after, err := node.SnapshotHost()
	if err != nil {
		t.Fatal(err)
	}
	if diff := after.Diff(before); len(diff) > 0 {
		t.Errorf("the host differs after the killed test's reaper ran:\n%s", strings.Join(diff, "\n"))
	}
}

func runNodeUntilKilled(t *testing.T) {
	n, err := node.Start(context.Background(), node.Options{Images: []string{buildElectorImage(t)}})
	if err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, n)
	createNamespace(t, c.client, "killed")
	deployElector(t, c.client, "killed", "killed-lease", 1)
	waitLease(t, c.client, "killed", "killed-lease", 3*time.Minute, func(l *coordinationv1.Lease) bool {
		return l.Spec.HolderIdentity != nil
	})
	os.Stdout.WriteString("NODE-RUNNING\n")
	time.Sleep(10 * time.Minute) // until killed
}
