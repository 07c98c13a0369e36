package promoperator

import (
	"context"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
)

// StartForTest starts the stack for t and stops it in t.Cleanup (before cp, which was started
// earlier); when t failed, it first prints the operator's and Prometheus's logs. Anything
// missing (the operator or Prometheus build) fails the test, never skips it.
func StartForTest(t testing.TB, cp *controlplane.ControlPlane, o Options) *Stack {
	t.Helper()
	// The build comes first and without the start-up's bound: under `make test` it runs beside
	// the suites at the lowest CPU priority and may still be compiling, which only the test
	// binary's -timeout should limit.
	if o.OperatorDir == "" {
		dir, err := operatorDir(context.Background(), "")
		if err != nil {
			t.Fatalf("build prometheus-operator stack: %v", err)
		}
		o.OperatorDir = dir
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
