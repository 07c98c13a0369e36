package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
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

// TestAlertsNoLeaderNamesAStalledCoordinatedElection: a released coordinated Lease whose
// spec.preferredHolder names sched-b, on an API server with the CoordinatedLeaderElection gate
// on. While sched-b's LeaseCandidate exists (renewed 30 s ago, so the API server's election
// controller pings it and, with no answer, elects nobody and leaves the Lease alone),
// LeaseNoLeader pages as for any leaderless Lease. Once the LeaseCandidate is deleted, the
// API server still prefers sched-b (kubernetes#138066: nobody will be elected), and the
// alert's description says so and names it.
func TestAlertsNoLeaderNamesAStalledCoordinatedElection(t *testing.T) {
	env.Shared(t)
	const ns, lease, preferred = "e2e-stalled", "scheduler", "sched-b"
	newScenario(t, ns, lease)
	ctx := context.Background()
	now := metav1.NowMicro()
	if _, err := env.Client.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: lease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(""), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &now, Strategy: ptr.To(coordinationv1.OldestEmulationVersion), PreferredHolder: ptr.To(preferred)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	renewed := metav1.NewMicroTime(time.Now().Add(-30 * time.Second))
	if _, err := env.Client.CoordinationV1beta1().LeaseCandidates(ns).Create(ctx, &coordinationv1beta1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: preferred},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: lease, RenewTime: &renewed, BinaryVersion: "1.36.0",
			EmulationVersion: "1.36.0", Strategy: coordinationv1.OldestEmulationVersion},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitProm(t, time.Minute, sel("lease_held", ns, lease), eq(0))
	waitProm(t, time.Minute, sel("lease_candidate_observed_renew_timestamp_seconds", ns, lease), func(float64) bool { return true })

	want := map[string]string{"alertname": "LeaseNoLeader", "namespace": ns, "lease": lease,
		"job": exporterJobName, "class": "leader-election", "kind": "Lease", "severity": "critical"}
	a := env.receiver.waitPage(t, env.receiver.mark(), want, now.Time, noLeaderFor, noLeaderFor+2*time.Minute)
	checkAnnotations(t, a, "LeaseNoLeader", fmt.Sprintf("Leader-election Lease %s/%s has no leader.", ns, lease))
	stalled := "Coordinated leader election is stalled: the API server prefers " + preferred + " as holder"
	if d := a.Annotations["description"]; strings.Contains(d, "Coordinated leader election is stalled") {
		t.Errorf("the description calls the election stalled while the preferred candidate's LeaseCandidate is fresh: %q", d)
	}

	if err := env.Client.CoordinationV1beta1().LeaseCandidates(ns).Delete(ctx, preferred, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var description string
	eventually(t, time.Minute, "LeaseNoLeader's description to name the stalled election", func() (bool, string) {
		alerts, err := promstack.Alerts(env.prom.URL)
		if err != nil {
			return false, err.Error()
		}
		for _, a := range alerts {
			if a.Labels["alertname"] == "LeaseNoLeader" && a.Labels["namespace"] == ns && a.Labels["lease"] == lease {
				description = a.Annotations["description"]
				return strings.Contains(description, stalled), "description: " + description
			}
		}
		return false, "LeaseNoLeader is not active"
	})
	t.Logf("LeaseNoLeader: %s", description)
	l, err := env.Client.CoordinationV1().Leases(ns).Get(ctx, lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.PreferredHolder == nil || *l.Spec.PreferredHolder != preferred || ptr.Deref(l.Spec.HolderIdentity, "") != "" {
		t.Errorf("the API server moved on (preferredHolder %v, holder %v): the stall this test shows is gone; update docs/runbooks/LeaseNoLeader.md",
			ptr.Deref(l.Spec.PreferredHolder, "<nil>"), ptr.Deref(l.Spec.HolderIdentity, "<nil>"))
	}
}
