//go:build release

package image_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunsAsNonRoot runs a probe inside the image, as a container started by buildah with the
// image's own user, and checks the process's credentials: 65532, no other group, no root.
func TestRunsAsNonRoot(t *testing.T) {
	mustImage(t)
	out := runProbe(t)
	t.Logf("the probe in the image: %s", strings.TrimSpace(out))
	if !strings.Contains(out, "uid=65532 gid=65532 groups=[]") && !strings.Contains(out, "uid=65532 gid=65532 groups=[65532]") {
		t.Errorf("the probe in the image says %q, want uid=65532 gid=65532 and no other group", out)
	}
}

// TestNoShell checks that the rootfs has no shell and no executable but the exporter, and that
// a process inside finds no shell on the image's PATH.
func TestNoShell(t *testing.T) {
	mustImage(t)
	for _, sh := range []string{"/bin/sh", "/bin/bash", "/bin/dash", "/bin/ash", "/bin/busybox", "/busybox",
		"/usr/bin/sh", "/usr/bin/bash", "/usr/bin/busybox", "/sbin/nologin"} {
		if _, ok := arch.rootfs[sh]; ok {
			t.Errorf("the image has %s", sh)
		}
	}
	for p, h := range arch.rootfs {
		if h.Typeflag == '0' && h.Mode&0o111 != 0 && p != "/bin/lease-exporter" {
			t.Errorf("the image has an executable besides the exporter: %s (mode %o)", p, h.Mode)
		}
	}
	if h, ok := arch.rootfs["/bin/lease-exporter"]; !ok || h.Mode&0o111 == 0 {
		t.Errorf("the image has no executable /bin/lease-exporter")
	}
	if out := runProbe(t); strings.Contains(out, "shell=") {
		t.Errorf("a process in the image finds a shell: %q", out)
	}
}

// TestVersion runs the image's entrypoint with --version inside the image (a buildah
// container, as the image's user) and checks it prints the stamped build arguments.
func TestVersion(t *testing.T) {
	mustImage(t)
	cmd := append(append([]string{}, arch.config.Config.Entrypoint...), "--version")
	out := inImage(t, nil, cmd...)
	for _, want := range []string{
		"lease-exporter, version " + args.Version + " (branch: " + args.Branch + ", revision: " + args.Revision + ")",
		"build date:       " + args.BuildDate,
		"build user:       docker",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("%q in the image printed\n%s\nwant a line with %q", cmd, out, want)
		}
	}
}

// runProbe runs testdata/whoami (static) inside the image, mounted read-only.
func runProbe(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "whoami"), "./testdata/whoami")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the probe: %v\n%s", err, b)
	}
	return inImage(t, []string{"--volume", dir + ":/probe:ro"}, "/probe/whoami")
}

// inImage runs cmd in a fresh buildah container of the image, as the image's configured user,
// without a network, and returns its output.
func inImage(t *testing.T, runArgs []string, cmd ...string) string {
	t.Helper()
	ctr := strings.TrimSpace(buildah(t, "from", "--pull=never", built.Ref))
	t.Cleanup(func() { _ = exec.Command("buildah", "rm", ctr).Run() })
	// --network none: buildah's default network is podman's CNI bridge with NAT to the
	// outside, which would leave a bridge, iptables chains and IPAM state on the host.
	return buildah(t, append(append(append([]string{"run", "--network", "none"}, runArgs...), ctr, "--"), cmd...)...)
}

// buildah runs buildah and returns its stdout; a failure fails the test with its stderr.
func buildah(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("buildah", args...).Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("buildah %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}
