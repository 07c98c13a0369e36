package release_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/release"
)

// makeNote is make's own line about a failed recipe: "make: *** …", or "make[1]: *** …" when
// make runs under make (as make test runs this test).
var makeNote = regexp.MustCompile(`^make(\[\d+\])?: \*\*\* `)

// TestMakeReleaseRefusesBadInput: without VERSION, with one that is not a semantic version, from
// a dirty tree, or at a commit whose chart and Kustomize base name another version, `make
// release` says in one line what is wrong and how to fix it, exits non-zero, and leaves dist/
// as it was (here: a previous release's file, untouched, and nothing else).
func TestMakeReleaseRefusesBadInput(t *testing.T) {
	dir := release.Clone(t)
	previous := filepath.Join(dir, "dist", "SHA256SUMS")
	if err := os.MkdirAll(filepath.Dir(previous), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(previous, []byte("a previous release\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, version string
		dirty         bool
		want          string
	}{
		{name: "no VERSION", want: "VERSION is not set: make release VERSION=X.Y.Z"},
		{name: "leading v", version: "v0.1.0", want: "starts with v: give it without, VERSION=0.1.0"},
		{name: "two numbers", version: "0.1", want: "'0.1' is not a semantic version X.Y.Z[-prerelease]"},
		{name: "leading zero", version: "0.01.0", want: "'0.01.0' is not a semantic version"},
		{name: "empty prerelease", version: "0.1.0-", want: "'0.1.0-' is not a semantic version"},
		{name: "build metadata", version: "0.1.0+abc", want: "has build metadata (+...), which an image tag cannot carry"},
		{name: "another version than the commit's", version: "0.2.0", want: "this commit is not v0.2.0: Chart.yaml version 0.1.0; Chart.yaml appVersion 0.1.0; the Kustomize base's newTag v0.1.0; CHANGELOG.md has no '## [0.2.0]' entry: run hack/release/bump.sh 0.2.0"},
		{name: "dirty tree", version: "0.1.0", dirty: true, want: "the tree is not clean (1 changed or untracked, first: README.md): commit or stash them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.dirty {
				readme := filepath.Join(dir, "README.md")
				orig, err := os.ReadFile(readme)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(readme, append(orig, "\nlocal edit\n"...), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = os.WriteFile(readme, orig, 0o644) })
			}
			code, stdout, stderr := release.Make(t, dir, tc.version)
			if code == 0 {
				t.Fatalf("make release VERSION=%q succeeded; stderr:\n%s", tc.version, stderr)
			}
			var ours []string
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !makeNote.MatchString(l) { // make's own note of the failed recipe
					ours = append(ours, l)
				}
			}
			if len(ours) != 1 || !strings.HasPrefix(ours[0], "make release: ") || !strings.Contains(ours[0], tc.want) {
				t.Errorf("stderr = %q, want one line 'make release: ...%s...'", stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			entries, err := os.ReadDir(filepath.Join(dir, "dist"))
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].Name() != "SHA256SUMS" {
				t.Errorf("dist/ holds %v after a refused release, want only the previous SHA256SUMS", entries)
			}
			if b, _ := os.ReadFile(previous); string(b) != "a previous release\n" {
				t.Errorf("the previous release's SHA256SUMS was changed to %q", b)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".release-*")); len(left) > 0 {
				t.Errorf("a refused release left its staging directory behind: %v", left)
			}
		})
	}
}
