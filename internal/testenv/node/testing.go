package node

import (
	"context"
	"testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
)

// StartForTest starts a node for t and stops it in t.Cleanup, printing every process's log
// tail first when t failed.
func StartForTest(t testing.TB, opts Options) *Node {
	t.Helper()
	n, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range n.Processes() {
				t.Logf("===== %s log (%s), last 40 lines =====\n%s", p.Name(), p.LogPath(), controlplane.Tail(p.Logs(), 40))
			}
		}
		if err := n.Stop(); err != nil {
			t.Errorf("stop node: %v", err)
		}
	})
	return n
}
