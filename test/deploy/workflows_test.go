package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// workflowsDir holds the GitHub Actions workflows: ci.yml runs .ci/run (`make test`) and
// release.yml runs `make release` and publishes what it builds (docs/versioning.md).
const workflowsDir = ".github/workflows"

// actionlint runs actionlint, with shellcheck on every run: script, over files relative to dir
// and returns its exit error and its report.
func actionlint(t *testing.T, dir string, files ...string) (string, error) {
	t.Helper()
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Fatalf("shellcheck not on PATH (%v): actionlint needs it to check the workflows' run: scripts; hack/deps.sh installs it (Debian package shellcheck)", err)
	}
	// -pyflakes= : no workflow runs Python, and the result must not depend on whether this
	// machine has pyflakes.
	args := append([]string{"-no-color", "-shellcheck", shellcheck, "-pyflakes="}, files...)
	cmd := exec.Command(tools.Actionlint(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// workflowFiles lists .github/workflows/*.yml and *.yaml, relative to the repository root.
func workflowFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.yml", "*.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, workflowsDir, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, err := filepath.Rel(root, f)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, rel)
		}
	}
	slices.Sort(files)
	return files
}

// TestWorkflowsPassActionlint: every workflow passes actionlint (the workflow schema, the
// expressions and their contexts, the actions' inputs, the permissions, the runner labels) and
// shellcheck on its run: scripts. GitHub reads these files only when a pull request or a tag is
// pushed; this is where a mistake in them shows before that.
func TestWorkflowsPassActionlint(t *testing.T) {
	root := tools.RepoRoot(t)
	files := workflowFiles(t, root)
	for _, want := range []string{"ci.yml", "release.yml"} {
		if !slices.Contains(files, filepath.Join(workflowsDir, want)) {
			t.Errorf("%s/%s is missing (found %v)", workflowsDir, want, files)
		}
	}
	if len(files) == 0 {
		t.FailNow()
	}
	if out, err := actionlint(t, root, files...); err != nil {
		t.Fatalf("actionlint %s: %v\n%s", strings.Join(files, " "), err, out)
	}
}

// TestActionlintRejectsABrokenWorkflow proves the check above can fail: ci.yml with one mistake
// at a time, copied into a scratch repository, is rejected by the rule that owns the mistake.
func TestActionlintRejectsABrokenWorkflow(t *testing.T) {
	root := tools.RepoRoot(t)
	good, err := os.ReadFile(filepath.Join(root, workflowsDir, "ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new string
		rule           string // actionlint's rule name, as it prints it: [rule]
	}{
		{"misspelt key", "runs-on:", "run-on:", "syntax-check"},
		{"unknown context property", "${{ github.ref }}", "${{ github.nope }}", "expression"},
		{"unquoted variable in a run: script", "run: bash .ci/run", "run: bash $CI_SCRIPT", "shellcheck"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(string(good), tc.old) {
				t.Fatalf("ci.yml no longer contains %q: update this test's mistakes", tc.old)
			}
			dir := t.TempDir()
			bad := strings.Replace(string(good), tc.old, tc.new, 1)
			if err := os.MkdirAll(filepath.Join(dir, workflowsDir), 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(workflowsDir, "ci.yml")
			if err := os.WriteFile(filepath.Join(dir, file), []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := actionlint(t, dir, file)
			if err == nil {
				t.Fatalf("actionlint accepted ci.yml with %q for %q:\n%s", tc.new, tc.old, out)
			}
			if !strings.Contains(out, "["+tc.rule+"]") {
				t.Errorf("actionlint rejected ci.yml with %q, but not by its %s rule:\n%s", tc.new, tc.rule, out)
			}
		})
	}
}

// TestWorkflowsRunTheLocalTargets: the workflows run what `make test` and the release tier
// prove locally, not steps of their own: ci.yml a step `bash .ci/run`, release.yml a step
// `make release` given the tag's version.
func TestWorkflowsRunTheLocalTargets(t *testing.T) {
	root := tools.RepoRoot(t)
	for _, tc := range []struct{ file, run string }{
		{"ci.yml", "bash .ci/run"},
		{"release.yml", `make release VERSION="${GITHUB_REF_NAME#v}"`},
	} {
		raw, err := os.ReadFile(filepath.Join(root, workflowsDir, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Steps []struct {
					Run string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(raw, &wf); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		found := false
		for _, job := range wf.Jobs {
			for _, step := range job.Steps {
				for line := range strings.Lines(step.Run) {
					found = found || strings.TrimSpace(line) == tc.run
				}
			}
		}
		if !found {
			t.Errorf("%s has no step that runs %s", tc.file, tc.run)
		}
	}
}
