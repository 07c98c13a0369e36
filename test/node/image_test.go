package node_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/node"
)

type image struct {
	archive, repository, tag string
}

func exporterImage(t *testing.T) image {
	t.Helper()
	const repo, tag = "ghcr.io/lease-exporter/lease-exporter", "node-test"
	path, err := node.BuildGoImage(t.TempDir(), "github.com/lease-exporter/lease-exporter/cmd/lease-exporter", repo+":"+tag)
	if err != nil {
		t.Fatal(err)
	}
	return image{archive: path, repository: repo, tag: tag}
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
