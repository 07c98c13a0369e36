// Package release builds a release as a release manager does, `make release` in a fresh clone,
// and serves one from a real OCI registry (the CNCF distribution registry) on loopback, for the
// release suite (test/release) and the node suite's install from a registry.
package release

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// Clone is a fresh clone of the repository's HEAD, as `make release` wants it: clean, with
// nothing from the working tree the tests run in.
func Clone(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "lease-exporter")
	Run(t, "", nil, "git", "clone", "--quiet", "--no-hardlinks", tools.RepoRoot(t), dir)
	return dir
}

// Make runs `make release` in dir with VERSION=version (unset when empty) and env added; it
// returns make's exit code, stdout and stderr.
func Make(t testing.TB, dir, version string, env ...string) (int, string, string) {
	t.Helper()
	args := []string{"-s", "--no-print-directory", "release"}
	if version != "" {
		args = append(args, "VERSION="+version)
	}
	cmd := exec.Command("make", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatalf("make release: %v", err)
	}
	return 0, stdout.String(), stderr.String()
}

// Build is dist/ of `make release VERSION=version` in a fresh clone of HEAD; it fails the test
// with make's output when the release fails.
func Build(t testing.TB, version string, env ...string) string {
	t.Helper()
	dir := Clone(t)
	start := time.Now()
	if code, _, stderr := Make(t, dir, version, env...); code != 0 {
		t.Fatalf("make release VERSION=%s: exit %d\n%s", version, code, stderr)
	}
	t.Logf("make release VERSION=%s: %s", version, time.Since(start).Round(time.Second))
	return filepath.Join(dir, "dist")
}

// Tools is the bin dir `hack/tools/build.sh release` fills: cosign, registry, crane and
// cyclonedx-gomod (a no-op once make release has built them).
func Tools(t testing.TB) string {
	t.Helper()
	out := strings.TrimSpace(Run(t, tools.RepoRoot(t), nil, "hack/tools/build.sh", "release"))
	return out[strings.LastIndex(out, "\n")+1:]
}

// StartRegistry runs the distribution registry on a free loopback port, storing under a temp
// dir, until the test ends, and returns its host:port. It serves plain HTTP: clients are told
// so (crane --insecure, helm --plain-http, cosign --allow-http-registry, a containerd hosts.toml).
func StartRegistry(t testing.TB) string {
	t.Helper()
	port, err := exporterproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
  secret: lease-exporter-test
`, filepath.Join(dir, "data"), addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs syncbuffer.Buffer
	cmd := exec.Command(filepath.Join(Tools(t), "registry"), "serve", config)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("registry log:\n%s", logs.String())
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry did not listen on %s within 30s:\n%s", addr, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Push puts dist's image index (tag vVERSION) in the registry at reg under
// lease-exporter/lease-exporter and its chart under charts/, as the release workflow does on
// ghcr.io; it returns the image repository, the index's digest, which it checks the registry
// kept, and the chart's reference by the digest `helm push` printed, read as the workflow
// reads it to sign the chart.
func Push(t testing.TB, dist, reg, version string) (repo, digest, chart string) {
	t.Helper()
	layout := t.TempDir()
	Run(t, "", nil, "tar", "-xf", filepath.Join(dist, "lease-exporter_image.oci.tar"), "-C", layout)
	raw, err := os.ReadFile(filepath.Join(dist, "lease-exporter_image.digest"))
	if err != nil {
		t.Fatal(err)
	}
	digest = strings.TrimSpace(string(raw))
	repo = reg + "/lease-exporter/lease-exporter"
	pushed := strings.TrimSpace(Run(t, "", nil, filepath.Join(Tools(t), "crane"), "push", "--insecure", layout, repo+":v"+version))
	if pushed != repo+"@"+digest {
		t.Fatalf("crane push printed %q, want %s@%s (the digest make release recorded)", pushed, repo, digest)
	}
	cmd := exec.Command(tools.Helm(t), "push", "--plain-http", filepath.Join(dist, "lease-exporter-"+version+".tgz"), "oci://"+reg+"/charts")
	cmd.Env = append(os.Environ(), tools.HelmEnv(t)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm push: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if d, ok := strings.CutPrefix(line, "Digest: "); ok && strings.HasPrefix(d, "sha256:") {
			return repo, digest, reg + "/charts/lease-exporter@" + strings.TrimSpace(d)
		}
	}
	t.Fatalf("helm push printed no line \"Digest: sha256:...\", which the release workflow signs:\n%s", out)
	return "", "", ""
}

// Run runs name args in dir (with env added) and returns its stdout; it fails the test, with
// the command's output, when the command fails.
func Run(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// cosignPassword encrypts the tests' throwaway cosign keys; cosign reads it from the
// environment instead of prompting.
const cosignPassword = "COSIGN_PASSWORD=release-test"

// Keys is a cosign key pair made for one test, as a release manager's COSIGN_KEY is.
type Keys struct {
	Private, Public string
	// Env is what cosign needs beside the private key to sign with it unprompted.
	Env []string
}

// KeyPair generates a new cosign key pair in a temporary directory.
func KeyPair(t testing.TB) Keys {
	t.Helper()
	dir := t.TempDir()
	Run(t, dir, []string{cosignPassword}, filepath.Join(Tools(t), "cosign"), "generate-key-pair")
	return Keys{Private: filepath.Join(dir, "cosign.key"), Public: filepath.Join(dir, "cosign.pub"), Env: []string{cosignPassword}}
}

// Sign signs the image ref (repo@digest, in a loopback registry over plain HTTP) with k,
// as the release workflow signs what it pushed; no transparency log is reachable here.
func Sign(t testing.TB, k Keys, ref string) {
	t.Helper()
	Run(t, "", k.Env, filepath.Join(Tools(t), "cosign"), "sign", "--yes", "--key", k.Private,
		"--tlog-upload=false", "--allow-http-registry", ref)
}

// Verify is `cosign verify` of ref with the public key pub: nil when a signature made with
// its private key is in the registry, else cosign's error and output.
func Verify(t testing.TB, pub, ref string) error {
	t.Helper()
	out, err := exec.Command(filepath.Join(Tools(t), "cosign"), "verify", "--key", pub,
		"--insecure-ignore-tlog=true", "--allow-http-registry", ref).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cosign verify %s: %v: %s", ref, err, bytes.TrimSpace(out))
	}
	return nil
}
