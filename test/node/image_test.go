package node_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	testimage "github.com/lease-exporter/lease-exporter/internal/testenv/image"
)

type image struct {
	archive, repository, tag string
}

// exporterImage is the image a user builds: the repository's Dockerfile, built by
// hack/image/build.sh with buildah (internal/testenv/image). Its own version, so that its
// archive is never the one test/image is rebuilding beside it (this build is then warm).
func exporterImage(t *testing.T) image {
	t.Helper()
	img, err := testimage.Build(context.Background(), testimage.Args{Version: "0.0.0-nodetest"})
	if err != nil {
		t.Fatalf("build the image: %v", err)
	}
	i := strings.LastIndex(img.Ref, ":")
	return image{archive: img.Archive, repository: img.Ref[:i], tag: img.Ref[i+1:]}
}

func helmPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("HELM")
	if p == "" {
		home, _ := os.UserHomeDir()
		cache := os.Getenv("LEASE_EXPORTER_CACHE")
		if cache == "" {
			cache = filepath.Join(home, ".cache", "lease-exporter")
		}
		p = filepath.Join(cache, "tools", "bin", "helm")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("helm not found at %s (%v): build it with hack/tools/build.sh", p, err)
	}
	return p
}
