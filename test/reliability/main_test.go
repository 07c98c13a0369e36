package reliability_test

import (
	"os"
	"testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// env is shared by every test (testsuite.Suite: one control plane, the release build and the
// same command built with -race). Tests run one after another (none calls t.Parallel) because
// several stop or restart the shared kube-apiserver and etcd; each test works in its own
// namespace and runs its own exporter scoped to it.
var env *testsuite.Suite

// TestMain fails the package, never skips it, when KUBEBUILDER_ASSETS is missing: a silently
// skipped fault suite proves nothing.
func TestMain(m *testing.M) {
	os.Exit(testsuite.Main(m, "reliability", &env, func(dir string) (*testsuite.Suite, error) {
		return testsuite.Start(dir, testsuite.Options{RaceBuild: true})
	}))
}
