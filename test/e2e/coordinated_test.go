package e2e

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestAlertsPreferredHolderNotLeading: a coordinated Lease (the API server serves the
// CoordinatedLeaderElection fields) whose spec.preferredHolder is not its holder, renewed all
// along, pages LeasePreferredHolderNotLeading through the shipped rule on a real Prometheus and
// Alertmanager after the rule's `for`; the handover to the preferred holder resolves it.
func TestAlertsPreferredHolderNotLeading(t *testing.T) {
	env.Shared(t)
	const ns, lease = "e2e-coordinated", "upgrade"
	newScenario(t, ns, lease)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	var holder atomic.Value
	holder.Store("sched-new")
	now := metav1.NowMicro()
	if _, err := env.Client.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: lease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("sched-new"), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &now, RenewTime: &now, Strategy: ptr.To(coordinationv1.OldestEmulationVersion),
			PreferredHolder: ptr.To("sched-old")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Renew every second as whoever holder names, so the Lease stays held throughout.
	go func() {
		for ctx.Err() == nil {
			if l, err := env.Client.CoordinationV1().Leases(ns).Get(ctx, lease, metav1.GetOptions{}); err == nil {
				l.Spec.HolderIdentity, l.Spec.RenewTime = ptr.To(holder.Load().(string)), &metav1.MicroTime{Time: time.Now()}
				_, _ = env.Client.CoordinationV1().Leases(ns).Update(ctx, l, metav1.UpdateOptions{})
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()

	waitProm(t, time.Minute, sel("lease_held", ns, lease), eq(1))
	waitProm(t, time.Minute, sel("lease_holder_is_preferred", ns, lease), eq(0))
	want := map[string]string{"alertname": "LeasePreferredHolderNotLeading", "namespace": ns, "lease": lease,
		"job": exporterJobName, "severity": "warning"}
	mark := env.receiver.mark()
	start := time.Now()
	a := env.receiver.waitPage(t, mark, want, start, preferredHolderFor, preferredHolderFor+2*time.Minute)
	checkAnnotations(t, a, "LeasePreferredHolderNotLeading",
		fmt.Sprintf("Lease %s/%s is not held by its preferred holder.", ns, lease),
		"The API server has preferred sched-old as holder of Lease "+ns+"/"+lease)

	mark = env.receiver.mark()
	holder.Store("sched-old") // the handover
	waitProm(t, time.Minute, sel("lease_holder_is_preferred", ns, lease), eq(1))
	env.receiver.wait(t, mark, match{"resolved", want}, 2*time.Minute)
}
