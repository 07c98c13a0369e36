// Package tools finds what the deploy, operator and node suites run as a user would: the
// repository's own files, the kubectl of the control-plane bin dir and the helm and actionlint
// that hack/tools/build.sh builds. Each finder fails the test, never skips it, and says how to
// get what is missing.
package tools

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// RepoRoot is the main module's root (this file is three levels below it).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate internal/testenv/tools's source")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s has no go.mod: %v", root, err)
	}
	return root
}

// CacheRoot is where hack/'s build scripts keep what they build:
// $LEASE_EXPORTER_CACHE, else ~/.cache/lease-exporter.
func CacheRoot() string {
	if c := os.Getenv("LEASE_EXPORTER_CACHE"); c != "" {
		return c
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "lease-exporter")
}

// Kubectl is the kubectl of the control-plane bin dir ($KUBEBUILDER_ASSETS): its embedded
// kustomize must be the one the project pins.
func Kubectl(t testing.TB) string {
	t.Helper()
	const hint = "build it with: export KUBEBUILDER_ASSETS=$(hack/kube-binaries/build.sh | tail -1)"
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		t.Fatalf("KUBEBUILDER_ASSETS is not set, so there is no kubectl; %s", hint)
	}
	p := filepath.Join(dir, "kubectl")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("kubectl missing in KUBEBUILDER_ASSETS=%s: %v; %s", dir, err, hint)
	}
	return p
}

// Helm is $HELM, else the helm hack/tools/build.sh builds into the cache.
func Helm(t testing.TB) string {
	t.Helper()
	return built(t, "helm", "HELM", "a helm v3 binary")
}

// Actionlint is $ACTIONLINT, else the actionlint hack/tools/build.sh builds into the cache.
func Actionlint(t testing.TB) string {
	t.Helper()
	return built(t, "actionlint", "ACTIONLINT", "an actionlint binary")
}

// built is $env, else hack/tools/build.sh's NAME in the cache; it fails the test when missing.
func built(t testing.TB, name, env, what string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join(CacheRoot(), "tools", "bin", name)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s not found at %s (%v): build it with hack/tools/build.sh, which hack/deps.sh runs (or set %s to %s)", name, p, err, env, what)
	}
	return p
}

// HelmEnv keeps helm away from the user's config, cache and repositories, and from any
// cluster but the one a command names.
func HelmEnv(t testing.TB) []string {
	t.Helper()
	d := t.TempDir()
	return []string{
		"HELM_CACHE_HOME=" + filepath.Join(d, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(d, "config"),
		"HELM_DATA_HOME=" + filepath.Join(d, "data"),
		"KUBECONFIG=" + filepath.Join(d, "no-kubeconfig"),
	}
}
