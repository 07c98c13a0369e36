package integration_test

import (
	"context"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A freshly started exporter must not report renewals from the future. Renew age is judged
// from when the exporter saw the record change, never later than its own clock, so it can
// never be negative (docs/metrics.md), least of all in the first second after the watch
// opens, when the API server's replay arrives.
func TestFreshExporterRenewAgeNotNegative(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ns := newNamespace(t, "startup")
	const name = "startup"
	leases := env.Client.CoordinationV1().Leases(ns)
	p := newProbe(env.exp, ns, name)

	now := metav1.NowMicro()
	lease, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("steady"), LeaseDurationSeconds: ptr.To[int32](10),
			AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create lease: %v", err)
	}

	// Renew every 100ms, like a busy cluster's node heartbeats: whatever window the exporter
	// has at start-up, renewals arrive in it. This goroutine is the Lease's only writer.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			l := lease.DeepCopy()
			l.Spec.RenewTime = ptr.To(metav1.NowMicro())
			if updated, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err == nil {
				lease = updated
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })

	p.until(t, deadline, poll, "the shared exporter shows the Lease", func(m leaseMetrics) error {
		return wantHeld(m, "steady", 0)
	})

	// A new exporter process, scraped from the moment it is ready.
	started := time.Now()
	p = newProbe(env.StartReady(t, env.Bin, "--metrics.extended"), ns, name)
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(fastPoll) {
		m, err := p.scrape()
		if err != nil {
			t.Fatal(err)
		}
		if age := m.v("lease_renew_age_seconds"); age < 0 {
			p.fatalf(t, "lease_renew_age_seconds %v: a renewal from the future, with the holder on the exporter's own clock "+
				"(exporter %s after start; lease_exporter_watch_up %v, lease_exporter_watch_stale_seconds %v)",
				age, time.Since(started).Round(time.Millisecond), selfMetric(p, "lease_exporter_watch_up"), selfMetric(p, "lease_exporter_watch_stale_seconds"))
		}
	}
}

// selfMetric returns an exporter self-metric without labels from the probe's last scrape.
func selfMetric(p *leaseProbe, name string) any {
	if ss := p.last.Series(name, nil); len(ss) == 1 {
		return ss[0].Value
	}
	return "absent"
}
