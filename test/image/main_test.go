//go:build release

// Package image_test builds the lease-exporter image from the repository's unmodified
// Dockerfile with buildah (hack/image/build.sh, on local stand-ins for the base images) once,
// in TestMain, and checks what users install: the docker-archive a node imports (its config,
// labels and the files of its rootfs, read back layer by layer) and the image run as a
// container by buildah (runc), as its configured user.
//
// It needs root, buildah, runc and debootstrap (hack/deps.sh release) and the Go module proxy, and
// FAILS, never skips, without them. It is its own package, not part of test/deploy, because
// it is the one suite that builds an image: minutes cold, and it changes buildah's storage.
//
//	go test -tags release ./test/image/
package image_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/image"
)

// args are the build arguments the image is stamped with: made-up values, so a test passes
// only if each reaches the binary and the labels (nothing else would produce them).
var args = image.Args{
	Version:   "0.0.0-imagetest",
	Revision:  "0123456789abcdef0123456789abcdef01234567",
	Branch:    "imagetest",
	BuildDate: "20260102-03:04:05",
	Created:   "2026-01-02T03:04:05Z",
}

var (
	built     image.Image
	buildTime time.Duration
	arch      *archive
	setupErr  error // why there is no image; every test fails with it
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	start := time.Now()
	built, setupErr = image.Build(ctx, args)
	buildTime = time.Since(start)
	cancel()
	if setupErr == nil {
		arch, setupErr = readArchive(built.Archive)
		if setupErr != nil {
			setupErr = fmt.Errorf("read %s: %w", built.Archive, setupErr)
		}
	}
	if setupErr != nil {
		fmt.Fprintln(os.Stderr, "test/image: no image:", setupErr)
	}
	os.Exit(m.Run())
}

// mustImage fails the test when TestMain could not build or read the image.
func mustImage(t *testing.T) {
	t.Helper()
	if setupErr != nil {
		t.Fatalf("the image was not built: %v", setupErr)
	}
}
