package node

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// BuildGoImage compiles a main package of this module statically and packs it as a one-layer
// OCI image archive named ref, with the binary as the entrypoint, running as 65532. It makes
// the images a registry would serve elsewhere (the pause image, test electors); the exporter's
// own image is built from the Dockerfile (hack/image).
func BuildGoImage(dir, pkg, ref string, args ...string) (string, error) {
	return BuildGoImageX(dir, pkg, ref, nil, args...)
}

// BuildGoImageX is BuildGoImage linking pkg with -X for each of xdefs
// ("importpath.name=value"): a build with a string variable changed, such as a mutant whose
// fault a test must catch.
func BuildGoImageX(dir, pkg, ref string, xdefs []string, args ...string) (string, error) {
	ldflags := "-s -w"
	for _, x := range xdefs {
		ldflags += " -X=" + x
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags="+ldflags, "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w: %s", pkg, err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar")
	entry := "/" + filepath.Base(pkg)
	return path, writeOCIArchive(path, ref, entry, data, append([]string{entry}, args...))
}

type blob struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int    `json:"size"`
}

func digestOf(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

// writeOCIArchive writes an OCI image layout as a tar, which `ctr images import` reads; the
// index names the image with containerd's own annotation, so no --base-name is needed.
func writeOCIArchive(path, ref, name string, binary []byte, entrypoint []string) error {
	var layer bytes.Buffer
	lt := tar.NewWriter(&layer)
	if err := lt.WriteHeader(&tar.Header{Name: strings.TrimPrefix(name, "/"), Mode: 0o755, Size: int64(len(binary)),
		ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := lt.Write(binary); err != nil {
		return err
	}
	if err := lt.Close(); err != nil {
		return err
	}
	config, _ := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux",
		"config": map[string]any{"Entrypoint": entrypoint, "User": "65532:65532"},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{digestOf(layer.Bytes())}},
	})
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": blob{"application/vnd.oci.image.config.v1+json", digestOf(config), len(config)},
		"layers": []blob{{"application/vnd.oci.image.layer.v1.tar", digestOf(layer.Bytes()), layer.Len()}},
	})
	tag := ref[strings.LastIndex(ref, ":")+1:]
	index, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []map[string]any{{
			"mediaType": "application/vnd.oci.image.manifest.v1+json",
			"digest":    digestOf(manifest), "size": len(manifest),
			"annotations": map[string]string{"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": tag},
		}},
	})
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{"blobs/sha256/" + digestOf(config)[7:], config},
		{"blobs/sha256/" + digestOf(manifest)[7:], manifest},
		{"blobs/sha256/" + digestOf(layer.Bytes())[7:], layer.Bytes()},
	}
	for _, fl := range files {
		if err := tw.WriteHeader(&tar.Header{Name: fl.name, Mode: 0o644, Size: int64(len(fl.data)),
			ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(fl.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}
