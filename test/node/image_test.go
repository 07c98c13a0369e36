//go:build release

package node_test

import (
	"context"
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
