//go:build release

package image_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestReference checks that the archive names the image as the chart and the Kustomize base
// do, so that overriding only the tag finds it, and holds the image buildah built.
func TestReference(t *testing.T) {
	mustImage(t)
	want := chartRepository(t) + ":v" + args.Version
	if built.Ref != want {
		t.Errorf("hack/image/build.sh printed the reference %q, want %q", built.Ref, want)
	}
	if len(arch.repoTags) != 1 || arch.repoTags[0] != want {
		t.Errorf("the archive's RepoTags = %q, want [%s]", arch.repoTags, want)
	}
	id := strings.TrimSpace(buildah(t, "inspect", "--type", "image", "--format", "{{.FromImageID}}", built.Ref))
	if arch.configID != id {
		t.Errorf("the archive holds image %s, buildah's storage has %s under %s", arch.configID, id, built.Ref)
	}
	if arch.config.OS != "linux" || arch.config.Architecture != runtime.GOARCH {
		t.Errorf("platform = %s/%s, want linux/%s", arch.config.OS, arch.config.Architecture, runtime.GOARCH)
	}
}

// chartRepository is the chart's image.repository, after checking that the Kustomize base
// names the same image.
func chartRepository(t *testing.T) string {
	t.Helper()
	var values struct{ Image struct{ Repository string } }
	readYAML(t, "deploy/helm/lease-exporter/values.yaml", &values)
	var kust struct{ Images []struct{ Name string } }
	readYAML(t, "deploy/kustomize/base/workload/kustomization.yaml", &kust)
	if len(kust.Images) != 1 || kust.Images[0].Name != values.Image.Repository {
		t.Fatalf("the Kustomize base's images %+v do not name the chart's %q", kust.Images, values.Image.Repository)
	}
	return values.Image.Repository
}

func readYAML(t *testing.T, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// TestConfig checks the config Kubernetes and a runtime read: a numeric non-root user (so
// runAsNonRoot can verify it), the exec-form entrypoint and the exporter's port.
func TestConfig(t *testing.T) {
	mustImage(t)
	c := arch.config.Config
	if c.User != "65532:65532" {
		t.Errorf("User = %q, want 65532:65532", c.User)
	}
	if strings.Join(c.Entrypoint, " ") != "/bin/lease-exporter" || len(c.Cmd) != 0 {
		t.Errorf("Entrypoint = %q, Cmd = %q, want [/bin/lease-exporter] and none", c.Entrypoint, c.Cmd)
	}
	if _, ok := c.ExposedPorts["10047/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("ExposedPorts = %v, want only 10047/tcp", c.ExposedPorts)
	}
}

// TestLabels checks the OCI labels, the stamped ones against the build arguments.
func TestLabels(t *testing.T) {
	mustImage(t)
	const repo = "https://github.com/lease-exporter/lease-exporter"
	want := map[string]string{
		"org.opencontainers.image.title":         "lease-exporter",
		"org.opencontainers.image.description":   "Prometheus exporter for Kubernetes Lease and leader-election health",
		"org.opencontainers.image.url":           repo,
		"org.opencontainers.image.source":        repo,
		"org.opencontainers.image.documentation": repo + "/blob/main/docs/deploy.md",
		"org.opencontainers.image.vendor":        "lease-exporter",
		"org.opencontainers.image.licenses":      "Apache-2.0",
		"org.opencontainers.image.version":       args.Version,
		"org.opencontainers.image.revision":      args.Revision,
		"org.opencontainers.image.created":       args.Created,
	}
	got := arch.config.Config.Labels
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		// io.buildah.version is buildah's own note of the builder, as docker adds none.
		if _, ok := want[k]; !ok && k != "io.buildah.version" {
			t.Errorf("unexpected label %s=%q (inherited from a base image?)", k, got[k])
		}
	}
}

// TestStandInsKeepLocalNames: the stand-ins for the Dockerfile's bases live in buildah's
// storage under local names, passed as build arguments. Under the real names (the Dockerfile's
// defaults) a later build on this machine that can pull would find them instead of golang and
// distroless.
func TestStandInsKeepLocalNames(t *testing.T) {
	mustImage(t)
	names := strings.Fields(buildah(t, "images", "--format", "{{.Name}}:{{.Tag}}"))
	for _, real := range []string{"gcr.io/distroless/static-debian12:nonroot", "docker.io/library/golang:1.26", "golang:1.26"} {
		for _, n := range names {
			if n == real {
				t.Errorf("buildah's storage holds an image named %s, the Dockerfile's default base: a stand-in must keep its local name (hack/image/README.md)", real)
			}
		}
	}
	for _, standIn := range []string{"localhost/lease-exporter/distroless-static:nonroot"} {
		found := false
		for _, n := range names {
			found = found || n == standIn
		}
		if !found {
			t.Errorf("no stand-in %s in buildah's storage (images: %v)", standIn, names)
		}
	}
}
