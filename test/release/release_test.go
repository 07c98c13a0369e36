//go:build release

package release_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/release"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

const version = "0.1.0" // the version HEAD's chart, Kustomize base and changelog name

// TestReleaseIsReproducibleSignedAndInstallableFromARegistry builds `make release` twice from a
// fresh clone and checks what a user and a release manager rely on:
//   - the two runs are byte-identical (the signature aside), the image index's digest included;
//   - every archive holds LICENSE, README.md and its executable, stamped with the version;
//   - SHA256SUMS verifies, and fails for a tampered archive; its cosign signature verifies with
//     the release key and not with another;
//   - each SBOM lists every Go module the binary was built from, with its version;
//   - the chart is X.Y.Z, deploys image tag vX.Y.Z; the Kustomize tree pins vX.Y.Z;
//   - pushed to a real OCI registry (CNCF distribution on loopback), the image index keeps its
//     digest and holds linux/amd64 and linux/arm64, its cosign signature verifies (and an
//     unsigned or re-signed image fails), the chart's too (by the digest helm push printed,
//     as the release workflow reads it), and the chart installs from oci:// as helm pulls it.
func TestReleaseIsReproducibleSignedAndInstallableFromARegistry(t *testing.T) {
	relTools := release.Tools(t)
	dir := release.Clone(t)
	keys := release.KeyPair(t)
	env := append([]string{"COSIGN_KEY=" + keys.Private}, keys.Env...)

	start := time.Now()
	if code, _, stderr := release.Make(t, dir, version, env...); code != 0 {
		t.Fatalf("make release VERSION=%s: exit %d\n%s", version, code, stderr)
	}
	t.Logf("first make release: %s", time.Since(start).Round(time.Second))
	first := filepath.Join(t.TempDir(), "dist")
	if err := os.Rename(filepath.Join(dir, "dist"), first); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if code, _, stderr := release.Make(t, dir, version, env...); code != 0 {
		t.Fatalf("second make release VERSION=%s: exit %d\n%s", version, code, stderr)
	}
	t.Logf("second make release: %s", time.Since(start).Round(time.Second))
	dist := filepath.Join(dir, "dist")

	t.Run("TwoRunsAreIdentical", func(t *testing.T) {
		a, b := listFiles(t, first), listFiles(t, dist)
		if !slices.Equal(a, b) {
			t.Fatalf("the runs wrote different files:\n%v\n%v", a, b)
		}
		for _, f := range a {
			if f == "SHA256SUMS.sig" {
				continue // ECDSA signs with a fresh random nonce: each signature differs, each verifies
			}
			x, _ := os.ReadFile(filepath.Join(first, f))
			y, _ := os.ReadFile(filepath.Join(dist, f))
			if !bytes.Equal(x, y) {
				t.Errorf("%s differs between two runs on one commit", f)
			}
		}
	})

	t.Run("DistHoldsEveryPlatformsArchivesAndSBOMs", func(t *testing.T) {
		files := listFiles(t, dist)
		var want []string
		for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
			for _, bin := range []string{"lease-exporter", "kubectl-lease"} {
				want = append(want, bin+"_"+p+".tar.gz", bin+"_"+p+".cdx.json")
			}
		}
		want = append(want, "lease-exporter_image.oci.tar", "lease-exporter_image.digest",
			"lease-exporter_image_linux_amd64.cdx.json", "lease-exporter_image_linux_arm64.cdx.json",
			"lease-exporter-"+version+".tgz", "lease-exporter_kustomize.tar.gz", "krew/lease.yaml",
			"SHA256SUMS", "SHA256SUMS.sig")
		slices.Sort(want)
		if !slices.Equal(files, want) {
			t.Errorf("dist/ = %v\nwant %v", files, want)
		}
		for _, f := range files {
			if !strings.HasSuffix(f, ".tar.gz") || strings.Contains(f, "kustomize") {
				continue
			}
			bin := strings.SplitN(f, "_", 2)[0]
			entries := tarEntries(t, filepath.Join(dist, f))
			if got := strings.Join(entries, " "); got != "LICENSE README.md "+bin {
				t.Errorf("%s holds %q, want LICENSE README.md %s", f, got, bin)
			}
		}
	})

	t.Run("BinaryReportsTheVersion", func(t *testing.T) {
		d := t.TempDir()
		platform := runtime.GOOS + "_" + runtime.GOARCH
		release.Run(t, "", nil, "tar", "-xzf", filepath.Join(dist, "lease-exporter_"+platform+".tar.gz"), "-C", d)
		out := release.Run(t, "", nil, filepath.Join(d, "lease-exporter"), "--version")
		if !strings.Contains(out, "version "+version+" ") || !strings.Contains(out, "branch: v"+version) {
			t.Errorf("lease-exporter --version = %q, want version %s from branch v%s", out, version, version)
		}
	})

	t.Run("ChecksumsVerifyAndCatchATamperedArchive", func(t *testing.T) {
		release.Run(t, dist, nil, "sha256sum", "--check", "--strict", "--quiet", "SHA256SUMS")
		sums, _ := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
		for _, f := range listFiles(t, dist) {
			if f != "SHA256SUMS" && f != "SHA256SUMS.sig" && !strings.Contains(string(sums), "  "+f+"\n") {
				t.Errorf("SHA256SUMS does not cover %s", f)
			}
		}
		tampered := t.TempDir()
		release.Run(t, "", nil, "cp", "-a", dist+"/.", tampered)
		f, err := os.OpenFile(filepath.Join(tampered, "lease-exporter_linux_amd64.tar.gz"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write([]byte{0})
		f.Close()
		cmd := exec.Command("sha256sum", "--check", "--quiet", "SHA256SUMS")
		cmd.Dir = tampered
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "lease-exporter_linux_amd64.tar.gz: FAILED") {
			t.Errorf("sha256sum -c passed a tampered archive (err %v): %s", err, out)
		}
	})

	cosign := filepath.Join(relTools, "cosign")
	otherKeys := release.KeyPair(t)

	t.Run("ChecksumsSignatureVerifiesWithTheReleaseKeyOnly", func(t *testing.T) {
		verify := func(pub string) error {
			cmd := exec.Command(cosign, "verify-blob", "--key", pub, "--insecure-ignore-tlog=true",
				"--signature", filepath.Join(dist, "SHA256SUMS.sig"), filepath.Join(dist, "SHA256SUMS"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}
		if err := verify(keys.Public); err != nil {
			t.Errorf("cosign verify-blob with the release key: %v", err)
		}
		if err := verify(otherKeys.Public); err == nil {
			t.Error("cosign verify-blob accepted SHA256SUMS's signature with another key")
		}
	})

	t.Run("SBOMsListEveryModuleOfTheirBinary", func(t *testing.T) {
		d := t.TempDir()
		for _, p := range []string{"linux_amd64", "darwin_arm64"} {
			for _, bin := range []string{"lease-exporter", "kubectl-lease"} {
				release.Run(t, "", nil, "tar", "-xzf", filepath.Join(dist, bin+"_"+p+".tar.gz"), "-C", d, bin)
				want := goModules(t, filepath.Join(d, bin))
				got := sbomModules(t, filepath.Join(dist, bin+"_"+p+".cdx.json"))
				for m, v := range want {
					if got[m] != v {
						t.Errorf("%s_%s.cdx.json: module %s is %q, want %q (go version -m)", bin, p, m, got[m], v)
					}
				}
				if len(want) < 20 {
					t.Errorf("go version -m %s found only %d modules", bin, len(want))
				}
			}
		}
	})

	t.Run("ChartAndKustomizePinTheRelease", func(t *testing.T) {
		helm := tools.Helm(t)
		chart := filepath.Join(dist, "lease-exporter-"+version+".tgz")
		show := release.Run(t, "", tools.HelmEnv(t), helm, "show", "chart", chart)
		for _, w := range []string{"version: " + version + "\n", "appVersion: " + version + "\n"} {
			if !strings.Contains(show, w) {
				t.Errorf("helm show chart: no %q in\n%s", w, show)
			}
		}
		manifests := release.Run(t, "", tools.HelmEnv(t), helm, "template", "le", chart)
		if !strings.Contains(manifests, "image: ghcr.io/lease-exporter/lease-exporter:v"+version+"\n") &&
			!strings.Contains(manifests, "image: \"ghcr.io/lease-exporter/lease-exporter:v"+version+"\"") {
			t.Errorf("the chart's default image is not ghcr.io/lease-exporter/lease-exporter:v%s", version)
		}
		d := t.TempDir()
		release.Run(t, "", nil, "tar", "-xzf", filepath.Join(dist, "lease-exporter_kustomize.tar.gz"), "-C", d)
		k, err := os.ReadFile(filepath.Join(d, "kustomize", "base", "workload", "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(k), "newTag: v"+version+"\n") {
			t.Errorf("the Kustomize base does not pin v%s:\n%s", version, k)
		}
	})

	t.Run("RegistryKeepsTheSignedIndexAndChart", func(t *testing.T) {
		reg := release.StartRegistry(t)
		repo, want, chart := release.Push(t, dist, reg, version)
		crane := filepath.Join(relTools, "crane")
		var index struct {
			Manifests []struct {
				Platform struct{ OS, Architecture string }
			}
		}
		raw := release.Run(t, "", nil, crane, "manifest", "--insecure", repo+":v"+version)
		if err := json.Unmarshal([]byte(raw), &index); err != nil {
			t.Fatal(err)
		}
		var platforms []string
		for _, m := range index.Manifests {
			platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
		}
		if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
			t.Errorf("the pushed index holds %v, want linux/amd64 and linux/arm64", platforms)
		}

		// signOnlyBy checks what a verifier relies on for ref: refused unsigned, accepted
		// once signed with the release key, refused for another key.
		signOnlyBy := func(what, ref string) {
			if err := release.Verify(t, keys.Public, ref); err == nil {
				t.Fatalf("cosign verify accepted the %s before it was signed", what)
			}
			release.Sign(t, keys, ref)
			if err := release.Verify(t, keys.Public, ref); err != nil {
				t.Errorf("cosign verify of the signed %s with the release key: %v", what, err)
			}
			if err := release.Verify(t, otherKeys.Public, ref); err == nil {
				t.Errorf("cosign verify accepted the %s with another key", what)
			}
		}
		ref := repo + "@" + want
		signOnlyBy("image", ref)
		// Re-signed by someone else: the release key still verifies only its own signature,
		// and the other key's signature does not pass for the release key's.
		release.Sign(t, otherKeys, ref)
		if err := release.Verify(t, otherKeys.Public, ref); err != nil {
			t.Errorf("cosign verify with the other key after it signed: %v", err)
		}
		// The chart, signed by the digest helm push printed, as the workflow signs it.
		signOnlyBy("chart", chart)

		helm := tools.Helm(t)
		henv := tools.HelmEnv(t)
		show := release.Run(t, "", henv, helm, "show", "chart", "--plain-http", "oci://"+reg+"/charts/lease-exporter", "--version", version)
		if !strings.Contains(show, "appVersion: "+version+"\n") {
			t.Errorf("the chart pulled from the registry: no appVersion %s in\n%s", version, show)
		}
		manifests := release.Run(t, "", henv, helm, "template", "le", "--plain-http", "oci://"+reg+"/charts/lease-exporter",
			"--version", version, "--set", "image.repository="+repo)
		if !strings.Contains(manifests, repo+":v"+version) {
			t.Errorf("the chart from the registry, with only image.repository set, does not deploy %s:v%s", repo, version)
		}
	})
}

// listFiles is every regular file under dir, relative, sorted.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// tarEntries lists a .tar.gz's entries in order.
func tarEntries(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

// goModules is the modules `go version -m` reads from a binary's build information:
// path → version (replacements resolved to what was built).
func goModules(t *testing.T, bin string) map[string]string {
	t.Helper()
	mods := map[string]string{}
	for _, l := range strings.Split(release.Run(t, "", nil, "go", "version", "-m", bin), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && (f[0] == "dep" || f[0] == "=>") {
			mods[f[1]] = f[2]
		}
	}
	return mods
}

// sbomModules is the Go modules a CycloneDX SBOM lists: name → version.
func sbomModules(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat  string `json:"bomFormat"`
		Components []struct {
			Name, Version string
		}
	}
	if err := json.Unmarshal(raw, &bom); err != nil {
		t.Fatal(err)
	}
	if bom.BOMFormat != "CycloneDX" {
		t.Errorf("%s: bomFormat %q, want CycloneDX", path, bom.BOMFormat)
	}
	mods := map[string]string{}
	for _, c := range bom.Components {
		mods[c.Name] = c.Version
	}
	return mods
}
