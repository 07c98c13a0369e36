//go:build release

package image_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestContainerdImports imports the archive, as a node would, into a containerd of its own
// (Debian's, the one the node tests run; its own root, state and socket in a temp dir, stopped
// after), and checks that the image is there under its reference, unpacked.
func TestContainerdImports(t *testing.T) {
	mustImage(t)
	sock := startContainerd(t)
	ctr := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("ctr", append([]string{"--address", sock, "--namespace", "k8s.io"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	ctr("images", "import", built.Archive)
	if refs := strings.Fields(ctr("images", "ls", "--quiet")); len(refs) != 1 || refs[0] != built.Ref {
		t.Fatalf("containerd has %q after the import, want [%s]", refs, built.Ref)
	}
	// REF TYPE DIGEST STATUS SIZE UNPACKED: the import unpacked it into the snapshotter,
	// as a kubelet's pull would.
	check := ctr("images", "check")
	if !strings.Contains(check, built.Ref) || !strings.Contains(check, "complete") || !strings.HasSuffix(strings.TrimSpace(check), "true") {
		t.Errorf("ctr images check:\n%s\nwant %s complete and unpacked", check, built.Ref)
	}
}

// startContainerd runs containerd without its CRI plugin, everything under a temp dir, until
// the test ends, and returns its socket. It fails, not skips, without containerd. Every path
// containerd writes is set, its opt plugin's too (by default /opt/containerd, in the host's
// tree), and the test fails if any default path appeared on the host meanwhile.
func startContainerd(t *testing.T) string {
	t.Helper()
	for _, c := range []string{"containerd", "ctr"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s not found (hack/deps.sh release installs Debian's containerd): %v", c, err)
		}
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "containerd.sock")
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc", filepath.Join(dir, "opt"))
	// containerd's default paths: none may appear because of this containerd.
	hostPaths := []string{"/opt/containerd", "/var/lib/containerd", "/run/containerd"}
	existed := map[string]bool{}
	for _, p := range hostPaths {
		_, err := os.Stat(p)
		existed[p] = err == nil
	}
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("containerd", "--config", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, and killed with the test binary, so nothing outlives the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		logf.Close()
		if m, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(m), dir) {
			t.Errorf("containerd left mounts under %s", dir)
		}
		for _, p := range hostPaths {
			if _, err := os.Stat(p); err == nil && !existed[p] {
				t.Errorf("containerd created %s on the host: everything it writes belongs under %s", p, dir)
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for exec.CommandContext(ctx, "ctr", "--address", sock, "version").Run() != nil {
		if ctx.Err() != nil {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("containerd did not answer on %s in 20s:\n%s", sock, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return sock
}
