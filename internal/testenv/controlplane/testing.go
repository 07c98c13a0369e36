package controlplane

import (
	"context"
	"testing"
)

// StartForTest starts a control plane for t and stops it in t.Cleanup. A
// missing KUBEBUILDER_ASSETS fails the test rather than skipping it. When
// the test failed, the logs of every process are printed before teardown.
func StartForTest(t testing.TB, opts ...Options) *ControlPlane {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	cp, err := Start(context.Background(), o)
	if err != nil {
		t.Fatalf("start control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range cp.Processes() {
				t.Logf("===== %s log (%s), last 60 lines =====\n%s", p.Name(), p.LogPath(), Tail(p.Logs(), 60))
			}
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	return cp
}
