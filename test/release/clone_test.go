package release_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// clone is a fresh clone of the repository's HEAD, as `make release` wants it: clean, with
// nothing from the working tree the tests run in.
func clone(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "lease-exporter")
	run(t, "", nil, "git", "clone", "--quiet", "--no-hardlinks", tools.RepoRoot(t), dir)
	return dir
}

// makeRelease runs `make release` in dir with VERSION=version (unset when empty) and extra
// environment; it returns make's exit code, stdout and stderr.
func makeRelease(t *testing.T, dir, version string, env ...string) (int, string, string) {
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
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("make release: %v", err)
	}
	return code, stdout.String(), stderr.String()
}

// run runs name args in dir (with env added) and returns its stdout; it fails the test, with
// the command's output, when the command fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
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
