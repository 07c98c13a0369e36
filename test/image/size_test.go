//go:build release

package image_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// sizeBudget bounds what a node pulls (the layers gzip-compressed, as a registry holds them).
// Nearly all of it is the exporter's binary.
const sizeBudget = 32e6

// TestSize reports the image's size and the build's time, keeps the size in its budget, and
// checks the size docs/deploy.md states (within 15%, so it is re-measured when it drifts).
func TestSize(t *testing.T) {
	mustImage(t)
	h := arch.rootfs["/bin/lease-exporter"]
	if h == nil {
		t.Fatal("no /bin/lease-exporter in the image")
	}
	t.Logf("image %s: %d layers, %.1f MB uncompressed, %.1f MB gzip-compressed; the binary %.1f MB; built in %s",
		built.Ref, arch.layers, mb(arch.size), mb(arch.gzipSize), mb(h.Size), buildTime.Round(1e9))
	if arch.gzipSize > sizeBudget {
		t.Errorf("the image is %.1f MB compressed, over its %.0f MB budget", mb(arch.gzipSize), mb(sizeBudget))
	}

	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`([0-9.]+) MB uncompressed, ([0-9.]+) MB gzip-compressed`).FindSubmatch(doc)
	if m == nil {
		t.Fatal(`docs/deploy.md states no "N MB uncompressed, N MB gzip-compressed" for the image`)
	}
	for i, got := range []int64{arch.size, arch.gzipSize} {
		stated, _ := strconv.ParseFloat(string(m[i+1]), 64)
		if r := mb(got) / stated; r < 0.85 || r > 1.15 {
			t.Errorf("docs/deploy.md says %s MB, the image is %.1f MB: update it", m[i+1], mb(got))
		}
	}
}

func mb(n int64) float64 { return float64(n) / 1e6 }
