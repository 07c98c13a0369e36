package promoperator

import (
	"context"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
)

// BuildForTest returns the operator's build directory (Options.OperatorDir), waiting for the
// build without a bound: under `make test-release` it runs beside the suites at the lowest CPU
// priority and may still be compiling, which only the test binary's -timeout should limit.
// Call it before starting a test's own timers. A failed build fails the test, never skips it.
func BuildForTest(t testing.TB) string {
	t.Helper()
	dir, err := operatorDir(context.Background(), "")
	if err != nil {
		t.Fatalf("build prometheus-operator stack: %v", err)
	}
	return dir
}

// StartForTest starts the stack for t and stops it in t.Cleanup (before cp, which was started
// earlier); when t failed, it first prints the operator's and Prometheus's logs. Anything
// missing (the operator or Prometheus build) fails the test, never skips it. Without
// o.OperatorDir it builds first (BuildForTest), outside the start-up's bound.
func StartForTest(t testing.TB, cp *controlplane.ControlPlane, o Options) *Stack {
	t.Helper()
	if o.OperatorDir == "" {
		o.OperatorDir = BuildForTest(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := Start(ctx, cp, o)
	if err != nil {
		t.Fatalf("start prometheus-operator stack: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for name, log := range s.Logs() {
				t.Logf("===== %s log, last 8000 bytes =====\n%s", name, tail(log, 8000))
			}
		}
		if err := s.Stop(); err != nil {
			t.Errorf("stop prometheus-operator stack: %v", err)
		}
	})
	return s
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
