package promoperator

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
)

// buildScript builds (or, warm, finds) the operator, its CRDs and Prometheus; `make test-release` runs
// it beside the suites too.
const buildScript = "hack/prometheus-operator/build.sh"

// operatorDir is Options.OperatorDir, else what buildScript prints: bin/prometheus-operator,
// bin/prometheus, crds/ and VERSION. Running the script here (a no-op once built; it waits for a
// build in progress) means a missing build is made, or fails the test with the script's own error, never
// skips it.
func operatorDir(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		root, err := exporterproc.ModuleRoot()
		if err != nil {
			return "", err
		}
		cmd := exec.CommandContext(ctx, filepath.Join(root, buildScript))
		cmd.Dir = root
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("%s: %w\n%s", buildScript, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		dir = lines[len(lines)-1]
	}
	for _, p := range []string{"bin/prometheus-operator", "bin/prometheus", "crds", "VERSION"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return "", fmt.Errorf("prometheus-operator build in %s is incomplete (%w); rebuild with FORCE_REBUILD=1 %s", dir, err, buildScript)
		}
	}
	return dir, nil
}

// startOperator runs the operator as a host process against the API server of kubeconfig, as
// cluster admin (its own RBAC is not what the tests are about). It reconciles Prometheus
// objects into a config Secret, rule ConfigMaps and a StatefulSet; nothing needs that
// StatefulSet's Pods, which no kubelet runs unless a test adds a node.
func startOperator(ctx context.Context, opDir, workDir, kubeconfig string) (*promstack.Process, error) {
	port, err := exporterproc.FreePort()
	if err != nil {
		return nil, err
	}
	return promstack.Start(ctx, promstack.Command{
		Name:      "prometheus-operator",
		Bin:       filepath.Join(opDir, "bin", "prometheus-operator"),
		Hint:      "build it with " + buildScript,
		Dir:       workDir,
		Port:      port,
		ReadyPath: "/healthz",
		// The operator reads KUBECONFIG when --apiserver is not given; its flags have no
		// --kubeconfig.
		Env: []string{"KUBECONFIG=" + kubeconfig},
		Args: []string{
			fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
			"--log-level=debug",
		},
	})
}

// operatorVersion is the release the build is of (its VERSION file, e.g. "v0.85.0").
func operatorVersion(opDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(opDir, "VERSION"))
	return strings.TrimSpace(string(b)), err
}
