package election_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

// A controller-runtime manager (hack/tools/crmanager) takes the Lease under controller-
// runtime's identity, <hostname>_<uuid>, reports leader_election_master_status 1 for it on
// its /metrics, and once SIGKILLed leaves the Lease as it was: hack/detect's crashed-operator
// faults rest on all three.
func TestControllerRuntimeManagerLeadsAndReportsItsStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin, err := election.BuildManager(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, "crmanager")
	w := watchLock(t, election.LockLease, ns, "lock")
	m, err := election.StartManager(ctx, bin, env.cp.KubeconfigPath(), ns, "lock", election.Components)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("manager log:\n%s", m.Logs())
		}
	})

	held := w.waitFor(time.Minute, "the manager holds", func(r record) bool { return r.holder != "" })
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(held.holder, hostname+"_") {
		t.Errorf("holder %q, want controller-runtime's %s_<uuid>", held.holder, hostname)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		v, err := m.Status()
		if err == nil && v == 1 && m.Leading() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("within a minute: status %v (%v), leading %v", v, err, m.Leading())
		}
		time.Sleep(100 * time.Millisecond)
	}

	m.Kill()
	// A release would be written at once; wait past a retry period, in which a live elector
	// would renew, and the Lease must still name the killed manager.
	killed := time.Now()
	time.Sleep(election.Components.RetryPeriod + time.Second)
	lease, err := env.client.CoordinationV1().Leases(ns).Get(ctx, "lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h == nil || *h != held.holder {
		t.Errorf("after SIGKILL the Lease's holder is %v, want %q unchanged", h, held.holder)
	}
	for _, r := range w.all() {
		if r.seen.After(killed) && r.holder != held.holder {
			t.Errorf("after SIGKILL the watch saw holder %q, want %q unchanged\n%s", r.holder, held.holder, w.dump())
		}
	}
}
