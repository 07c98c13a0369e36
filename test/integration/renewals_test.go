package integration_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

// stormTimings renew every 100 ms, the retry period in milliseconds that LeaseRenewStorm's
// runbook names; clientGoDefaults are client-go's (and controller-runtime's) own.
var (
	stormTimings     = election.Timings{LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond}
	clientGoDefaults = election.Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
)

// A client-go elector renewing every 100 ms beside one at client-go's defaults, each alone on
// its Lease: each one's lease_observed_renewals_total matches, within 2%, the renewals the
// API server served, which its audit log counts (with one elector every successful update
// of the Lease is a renewal; the create is its acquisition).
func TestObservedRenewalsMatchTheWritesServed(t *testing.T) {
	env.Shared(t)
	ns := newNamespace(t, "renewals")
	electors := map[string]*election.Candidate{}
	for lease, tm := range map[string]election.Timings{"stormy": stormTimings, "calm": clientGoDefaults} {
		c, err := election.Start(context.Background(), env.Client, ns, lease, lease+"-a", tm, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Stop)
		electors[lease] = c
	}
	for _, c := range electors {
		waitLeading(t, c)
	}
	const run = 20 * time.Second
	time.Sleep(run)
	for _, c := range electors {
		c.Stop() // without release: no write after the last renewal
	}

	for lease := range electors {
		p := newProbe(env.exp, ns, lease)
		var creates, updates int
		m := p.until(t, deadline, poll, "the exporter has counted "+lease+"'s renewals", func(m leaseMetrics) error {
			events, err := env.CP.AuditEvents()
			if err != nil {
				return err
			}
			creates, updates = controlplane.Writes(events, ns, lease)
			if creates != 1 || updates == 0 {
				return fmt.Errorf("audit log: %d creates and %d updates of %s/%s, want 1 create and renewals", creates, updates, ns, lease)
			}
			if got := m.v("lease_observed_renewals_total"); !(math.Abs(got-float64(updates)) <= 0.02*float64(updates)) {
				return fmt.Errorf("lease_observed_renewals_total %v, the API server served %d renewals (2%% tolerance)", got, updates)
			}
			return nil
		})
		t.Logf("%s: %d renewals served in about %s (%.1f a second), lease_observed_renewals_total %v",
			lease, updates, run, float64(updates)/run.Seconds(), m.v("lease_observed_renewals_total"))
	}
}
