// Command krew writes kubectl lease's krew manifest (plugins/lease.yaml) from the release
// archives hack/krew/package.sh built, one per platform, with their sha256: `make krew`.
//
//	go run . -version 1.2.3 -dist DIR -out FILE [-base-url URL]
//
// The archives are DIR/kubectl-lease_<os>_<arch>.tar.gz, each holding the kubectl-lease
// binary; the manifest points at them under -base-url (the GitHub release's download URL
// by default). krew's own validator (sigs.k8s.io/krew/cmd/validate-krew-manifest, pinned in
// this module) checks the result, in package.sh and in test/krew.
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/krew/pkg/index"
	"sigs.k8s.io/yaml"
)

// platforms are the ones the manifest offers.
var platforms = []struct{ os, arch string }{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

const (
	binary  = "kubectl-lease"
	baseURL = "https://github.com/lease-exporter/lease-exporter/releases/download/v{{version}}"
)

func main() {
	version := flag.String("version", "", "the release's version, without v (1.2.3)")
	dist := flag.String("dist", "dist/krew", "the directory holding the archives")
	out := flag.String("out", "plugins/lease.yaml", "where to write the manifest")
	base := flag.String("base-url", baseURL, "the URL the archives are downloaded from; {{version}} is replaced")
	flag.Parse()
	if err := run(*version, *dist, *out, *base); err != nil {
		fmt.Fprintln(os.Stderr, "hack/krew: "+err.Error())
		os.Exit(1)
	}
}

func run(version, dist, out, base string) error {
	if version == "" || strings.HasPrefix(version, "v") {
		return fmt.Errorf("-version %q: give the release's version without its v, such as 1.2.3", version)
	}
	p, err := manifest(version, dist, strings.ReplaceAll(base, "{{version}}", version))
	if err != nil {
		return err
	}
	b, err := yaml.Marshal(p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// manifest is the krew Plugin for the archives in dist.
func manifest(version, dist, base string) (*index.Plugin, error) {
	p := &index.Plugin{
		TypeMeta:   metav1.TypeMeta{APIVersion: "krew.googlecontainertools.github.com/v1alpha2", Kind: "Plugin"},
		ObjectMeta: metav1.ObjectMeta{Name: "lease"},
		Spec: index.PluginSpec{
			Version:          "v" + version,
			Homepage:         "https://github.com/lease-exporter/lease-exporter/blob/main/docs/kubectl-plugin.md",
			ShortDescription: "Show who holds each leader-election lock, and whether validly",
			Description: `kubectl lease lists every leader-election lock (Leases, and the leader annotation of
ConfigMaps and Endpoints): who holds it, whether validly right now (on time, lagging,
expired or released), and how long ago it was renewed, judged as lease-exporter judges it,
against the API server's clock. describe shows one lock with its coordinated-election
candidates and, from a lease-exporter, its history; -w follows a failover.`,
		},
	}
	for _, pl := range platforms {
		name := fmt.Sprintf("%s_%s_%s.tar.gz", binary, pl.os, pl.arch)
		sum, err := checkArchive(filepath.Join(dist, name))
		if err != nil {
			return nil, err
		}
		p.Spec.Platforms = append(p.Spec.Platforms, index.Platform{
			URI: base + "/" + name, Sha256: sum,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"os": pl.os, "arch": pl.arch}},
			Files:    []index.FileOperation{{From: binary, To: "."}, {From: "LICENSE", To: "."}},
			Bin:      binary,
		})
	}
	return p, nil
}

// checkArchive returns the sha256 of the archive at path, after checking that it holds the
// binary and the LICENSE at its top, as the manifest's files and bin say.
func checkArchive(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%w: build the archives first (hack/krew/package.sh, make krew)", err)
	}
	defer f.Close()
	h := sha256.New()
	gz, err := gzip.NewReader(io.TeeReader(f, h))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	tr, found, license := tar.NewReader(gz), false, false
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		found = found || (hdr.Name == binary && hdr.Typeflag == tar.TypeReg && hdr.Mode&0o111 != 0)
		license = license || (hdr.Name == "LICENSE" && hdr.Typeflag == tar.TypeReg)
	}
	if !found {
		return "", fmt.Errorf("%s holds no executable %s at its top", path, binary)
	}
	if !license {
		return "", fmt.Errorf("%s holds no LICENSE at its top: krew-index takes no plugin without one (hack/krew/package.sh puts it there)", path)
	}
	if _, err := io.Copy(io.Discard, f); err != nil { // the gzip trailer and any padding
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
