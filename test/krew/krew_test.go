//go:build release

// Package krew_test proves kubectl lease's krew manifest (issue 37): `make krew`'s script
// builds the archives for linux and darwin on amd64 and arm64 and writes the manifest, krew's
// own validator accepts it, and krew itself installs the plugin from it, which real kubectl
// then finds and runs.
package krew_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// manifest is the part of the krew Plugin the test reads.
type manifest struct {
	Metadata struct{ Name string }
	Spec     struct {
		Version   string
		Platforms []struct {
			URI, Sha256, Bin string
			Selector         struct{ MatchLabels map[string]string }
		}
	}
}

func TestKrewManifestValidatesAndInstalls(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: it names the kubectl to install the plugin into (make test-release sets it)")
	}
	root, err := exporterproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dist, out := filepath.Join(dir, "dist"), filepath.Join(dir, "plugins", "lease.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// Four cross-compiles: at the lowest priority, beside the other release suites.
	run(t, ctx, root, []string{"VERSION=0.0.0-krewtest"}, "nice", "-n", "19", filepath.Join(root, "hack", "krew", "package.sh"), dist, out)

	var m manifest
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	platforms := map[string]string{}
	for _, p := range m.Spec.Platforms {
		platforms[p.Selector.MatchLabels["os"]+"/"+p.Selector.MatchLabels["arch"]] = p.URI
		if len(p.Sha256) != 64 || p.Bin != "kubectl-lease" {
			t.Errorf("platform %v: sha256 %q bin %q", p.Selector.MatchLabels, p.Sha256, p.Bin)
		}
	}
	for _, want := range []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"} {
		if !strings.HasSuffix(platforms[want], "/v0.0.0-krewtest/kubectl-lease_"+strings.ReplaceAll(want, "/", "_")+".tar.gz") {
			t.Errorf("platform %s: uri %q", want, platforms[want])
		}
	}
	if m.Metadata.Name != "lease" || m.Spec.Version != "v0.0.0-krewtest" || len(platforms) != 4 {
		t.Errorf("manifest %s v%s with %d platforms", m.Metadata.Name, m.Spec.Version, len(platforms))
	}

	// krew itself installs the plugin from the manifest and this platform's archive.
	tools := filepath.Join(dir, "tools")
	run(t, ctx, filepath.Join(root, "hack", "krew"), []string{"GOWORK=off"}, "go", "build", "-o", filepath.Join(tools, "kubectl-krew"), "sigs.k8s.io/krew/cmd/krew")
	krewRoot := filepath.Join(dir, "krew-root")
	path := strings.Join([]string{filepath.Join(krewRoot, "bin"), tools, os.Getenv("KUBEBUILDER_ASSETS"), os.Getenv("PATH")}, string(os.PathListSeparator))
	env := []string{"KREW_ROOT=" + krewRoot, "PATH=" + path, "HOME=" + dir}
	archive := filepath.Join(dist, "kubectl-lease_"+runtime.GOOS+"_"+runtime.GOARCH+".tar.gz")
	run(t, ctx, dir, env, "kubectl", "krew", "install", "--manifest", out, "--archive", archive)
	if got := run(t, ctx, dir, env, "kubectl", "lease", "--version"); !strings.Contains(got, "kubectl lease version 0.0.0-krewtest") {
		t.Errorf("kubectl lease --version through krew's link: %q", got)
	}
	// The license installs with the plugin, as krew-index requires.
	if licenses, _ := filepath.Glob(filepath.Join(krewRoot, "store", "lease", "*", "LICENSE")); len(licenses) != 1 {
		t.Errorf("krew's store holds LICENSE files %v, want the plugin's one", licenses)
	}
	if got := run(t, ctx, dir, env, "kubectl", "plugin", "list"); !strings.Contains(got, filepath.Join(krewRoot, "bin", "kubectl-lease")) {
		t.Errorf("kubectl plugin list does not list krew's kubectl-lease:\n%s", got)
	}

	// An archive that is not the one the manifest hashed is refused.
	other := filepath.Join(dist, "kubectl-lease_darwin_arm64.tar.gz")
	cmd := exec.CommandContext(ctx, "kubectl", "krew", "install", "--manifest", out, "--archive", other)
	cmd.Env, cmd.Dir = append(os.Environ(), "KREW_ROOT="+filepath.Join(dir, "krew-root-2"), "PATH="+path, "HOME="+dir), dir
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "checksum") {
		t.Errorf("krew installed %s for %s/%s, or failed for another reason than its sha256 (%v):\n%s", other, runtime.GOOS, runtime.GOARCH, err, b)
	}
}

// run runs name args in dir with env added, failing t with its output on error.
func run(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}
