// Package image builds the lease-exporter container image the way a user does, from the
// repository's unmodified Dockerfile with buildah, through hack/image/build.sh (local
// stand-ins for the base images; nothing is pulled). Tests that need the image, or need it
// running on a node, build it here.
package image

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Args are the Dockerfile's build arguments. Empty fields take hack/image/build.sh's defaults
// (from git, and the time of the build).
type Args struct {
	Version   string // VERSION: the binary's --version, the image tag (v<Version>), a label
	Revision  string // REVISION
	Branch    string // BRANCH
	BuildDate string // BUILD_DATE, Prometheus' 20060102-15:04:05
	Created   string // CREATED, RFC 3339, the org.opencontainers.image.created label
}

// Image is a built image.
type Image struct {
	// Ref is its name in buildah's storage and in the archive:
	// ghcr.io/lease-exporter/lease-exporter:v<version>, the chart's and Kustomize base's name.
	Ref string
	// Archive is a docker-archive of it that `ctr -n k8s.io images import` accepts.
	Archive string
	// Log is the build's output (buildah's steps, the scripts' timings).
	Log string
}

// Build runs hack/image/build.sh. It fails, with the script's output, when buildah,
// debootstrap or the module proxy is missing.
func Build(ctx context.Context, args Args) (Image, error) {
	root, err := repoRoot()
	if err != nil {
		return Image{}, err
	}
	if _, err := exec.LookPath("buildah"); err != nil {
		return Image{}, fmt.Errorf("buildah not found (hack/deps.sh release installs it): %w", err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "image", "build.sh"))
	cmd.Dir = root
	cmd.Env = os.Environ()
	for k, v := range map[string]string{
		"VERSION": args.Version, "REVISION": args.Revision, "BRANCH": args.Branch,
		"BUILD_DATE": args.BuildDate, "CREATED": args.Created,
	} {
		if v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Image{}, fmt.Errorf("hack/image/build.sh: %w\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) < 2 {
		return Image{}, fmt.Errorf("hack/image/build.sh printed %q, want the image reference and the archive's path", stdout.String())
	}
	return Image{Ref: lines[len(lines)-2], Archive: lines[len(lines)-1], Log: stderr.String()}, nil
}

// repoRoot is the module's root: this file is three levels below it.
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the image package's source")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "Dockerfile")); err != nil {
		return "", fmt.Errorf("no Dockerfile at the repository root %s: %w", root, err)
	}
	return root, nil
}
