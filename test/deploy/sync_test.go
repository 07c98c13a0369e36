package deploy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// TestCopiesInSync fails while a copy that deploy/sync.sh makes differs from its single
// source. Kustomize and Helm cannot read files outside their own directories, so the
// dashboards and the generated PrometheusRule are copied; the originals are the truth.
func TestCopiesInSync(t *testing.T) {
	root := tools.RepoRoot(t)
	const fix = "edit the source, not the copy, and run deploy/sync.sh"

	srcDashboards := globBase(t, filepath.Join(root, "dashboards", "*.json"))
	if len(srcDashboards) == 0 {
		t.Fatal("no dashboards/*.json")
	}
	for _, dst := range []string{
		"deploy/kustomize/components/prometheus-operator/dashboards",
		"deploy/helm/lease-exporter/dashboards",
	} {
		got := globBase(t, filepath.Join(root, dst, "*.json"))
		if !slices.Equal(got, srcDashboards) {
			t.Errorf("%s holds %v, dashboards/ has %v: %s", dst, got, srcDashboards, fix)
			continue
		}
		for _, name := range srcDashboards {
			sameFile(t, filepath.Join(root, "dashboards", name), filepath.Join(root, dst, name), fix)
		}
	}
	sameFile(t, filepath.Join(root, generatedRulePath), filepath.Join(root, "deploy/helm/lease-exporter/files/prometheusrule.yaml"), fix)
}

func globBase(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range m {
		out = append(out, filepath.Base(p))
	}
	slices.Sort(out)
	return out
}

func sameFile(t *testing.T, src, dst, fix string) {
	t.Helper()
	a, err := os.ReadFile(src)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Errorf("%v: %s", err, fix)
		return
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s differs from its source %s: %s", dst, src, fix)
	}
}
