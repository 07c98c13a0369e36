package image_test

import (
	"testing"
)

// sizeBudget bounds what a node pulls (the layers gzip-compressed, as a registry holds them);
// docs/deploy.md states the measured size. Nearly all of it is the exporter's binary.
const sizeBudget = 32e6

// TestSize reports the image's size and the build's time, and keeps the size in its budget.
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
}

func mb(n int64) float64 { return float64(n) / 1e6 }
