package node_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/node"
)

// TestNodeRunsAnElectorPodAndStopLeavesTheHostAsItWas starts the node, runs a client-go
// elector Pod that takes a Lease through the "kubernetes" Service with its ServiceAccount
// token, stops the node, and compares the host with how it was before.
func TestNodeRunsAnElectorPodAndStopLeavesTheHostAsItWas(t *testing.T) {
	before, err := node.SnapshotHost()
	if err != nil {
		t.Fatal(err)
	}
	elector := buildElectorImage(t)
	n, err := node.Start(context.Background(), node.Options{Images: []string{elector}})
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			dumpLogs(t, n)
			_ = n.Stop()
		}
	}()
	client := kubernetes.NewForConfigOrDie(n.ControlPlane().Config())
	ns := createNamespace(t, client, "node-smoke")
	deployElector(t, client, ns, "smoke-lease", 1)
	lease := waitLease(t, client, ns, "smoke-lease", 3*time.Minute, func(l *coordinationv1.Lease) bool {
		return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != ""
	})
	t.Logf("the elector Pod holds %s/%s as %q", ns, lease.Name, *lease.Spec.HolderIdentity)
	if t.Failed() {
		dumpLogs(t, n)
	}
	stopped = true
	if err := n.Stop(); err != nil {
		t.Fatalf("stop node: %v", err)
	}
	after, err := node.SnapshotHost()
	if err != nil {
		t.Fatal(err)
	}
	if diff := after.Diff(before); len(diff) > 0 {
		t.Errorf("the host differs after the node stopped:\n%s", fmt.Sprint(diff))
	}
}
