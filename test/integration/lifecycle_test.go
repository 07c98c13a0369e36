package integration_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

// A deleted Lease must vanish from /metrics, and a recreated one is a new object: its
// counters start from the new object (a reset for Prometheus), never continue the old ones.
func TestLeaseDeletedAndRecreated(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "lifecycle")
	const name = "lifecycle"
	leases := env.Client.CoordinationV1().Leases(ns)
	p := newProbe(env.exp, ns, name)

	// The first incarnation is written by hand, so it has a history to forget: 5 transitions
	// recorded by earlier holders and one holder change seen by the exporter.
	now := metav1.NowMicro()
	first, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("alpha"), LeaseDurationSeconds: ptr.To[int32](30),
			AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](5),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create lease: %v", err)
	}
	p.until(t, deadline, poll, "the exporter shows the first incarnation", func(m leaseMetrics) error {
		return wantMetrics(m, "alpha", 5, 0)
	})
	first.Spec.HolderIdentity, first.Spec.LeaseTransitions = ptr.To("beta"), ptr.To[int32](6)
	if first, err = leases.Update(ctx, first, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update lease: %v", err)
	}
	p.until(t, deadline, poll, "the exporter counts the holder change", func(m leaseMetrics) error {
		return wantMetrics(m, "beta", 6, 1)
	})

	if err := leases.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete lease: %v", err)
	}
	p.until(t, deadline, poll, "every series of the deleted Lease disappears", func(m leaseMetrics) error {
		if m.series != 0 {
			return fmt.Errorf("%d series still exported", m.series)
		}
		return nil
	})

	// creationTimestamp has one-second resolution; let it tick so the new object's differs
	// (and with it the counters' created timestamp), as it would in any real recreation.
	for !time.Now().After(first.CreationTimestamp.Add(1100 * time.Millisecond)) {
		time.Sleep(50 * time.Millisecond)
	}
	// The second incarnation is created by a real client-go candidate, as after a cleanup of
	// a controller's namespace: it starts at leaseTransitions 0.
	c, err := election.Start(ctx, env.Client, ns, name, "gamma", election.Fast, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	p.until(t, deadline, poll, "the exporter shows the recreated Lease from scratch", func(m leaseMetrics) error {
		second, err := p.api()
		if err != nil {
			return err
		}
		if second.UID == first.UID {
			return brokenf("API server returned the deleted object's UID %s", first.UID)
		}
		if second.CreationTimestamp.Equal(&first.CreationTimestamp) {
			return brokenf("recreated Lease has the old creationTimestamp %s", first.CreationTimestamp)
		}
		return wantMetrics(m, "gamma", transitionsOf(second), 0)
	})
}

// wantMetrics checks holder and both counters of one scrape.
func wantMetrics(m leaseMetrics, holder string, transitions, observed float64) error {
	var errs []error
	if m.infos != 1 || m.holder != holder {
		errs = append(errs, fmt.Errorf("%d lease_info series with holder %q, want one with %q", m.infos, m.holder, holder))
	}
	if got := m.v("lease_transitions_total"); got != transitions {
		errs = append(errs, fmt.Errorf("lease_transitions_total %v, want %v", got, transitions))
	}
	if got := m.v("lease_observed_holder_changes_total"); got != observed {
		errs = append(errs, fmt.Errorf("lease_observed_holder_changes_total %v, want %v", got, observed))
	}
	return errors.Join(errs...)
}
