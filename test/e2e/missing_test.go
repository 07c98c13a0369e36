package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

// The lock the shared exporter is told must exist (--expect in setup). Nothing else uses
// its namespace. It is missing from the start, and again after the test deletes it: its
// LeaseMissing then fires in the background, which no other test's match sees.
const missingNS, missingLease = "e2e-missing", "worker"

// TestAlertsLeaseMissing deletes a declared Lease whose only elector was stopped (a
// controller scaled to 0 and its Lease cleaned up): every per-lease series goes with it, and
// only lease_expected_present is left to say so. LeaseMissing pages after its grace, naming
// the last holder; the elector coming back creates the Lease and resolves it.
func TestAlertsLeaseMissing(t *testing.T) {
	env.Shared(t)
	s := newScenario(t, missingNS, missingLease)
	present := sel("lease_expected_present", missingNS, missingLease)

	first := s.candidate(missingNS, missingLease, "worker-a", election.Fast, false)
	eventually(t, time.Minute, "worker-a to lead", func() (bool, string) { return first.Leading(), "not leading" })
	waitProm(t, time.Minute, present, eq(1))
	waitProm(t, time.Minute, sel("lease_held", missingNS, missingLease), eq(1))
	seen := time.Now()
	want := map[string]string{"alertname": "LeaseMissing", "namespace": missingNS, "lease": missingLease,
		"kind": "Lease", "job": exporterJobName, "severity": "critical"}
	// Missing before worker-a created it: whatever was pending or firing then must be over
	// before the mark, so that the page below is the deletion's.
	alerts := fmt.Sprintf(`ALERTS{alertname="LeaseMissing",namespace=%q,lease=%q}`, missingNS, missingLease)
	eventually(t, time.Minute, "no LeaseMissing pending or firing once the Lease exists", func() (bool, string) {
		ss, err := promQuery(alerts)
		return err == nil && len(ss) == 0, fmt.Sprintf("err=%v %s", err, formatSamples(ss))
	})

	// The description finds the last holder with a [1h:1m] subquery whose steps sit on whole
	// minutes: the Lease's series must have been in Prometheus at one, before the deletion
	// takes them away. So delete just after the first whole minute since it was scraped.
	if deleteAt := seen.Truncate(time.Minute).Add(time.Minute + 2*scrapeInterval); time.Now().Before(deleteAt) {
		time.Sleep(time.Until(deleteAt))
	}
	mark := env.receiver.mark()
	first.Stop()
	deleteLease(t, missingNS, missingLease)
	deleted := time.Now()
	waitProm(t, time.Minute, present, eq(0))
	a := env.receiver.waitPage(t, mark, want, deleted, missingFor, 2*time.Minute)
	checkAnnotations(t, a, "LeaseMissing",
		fmt.Sprintf("Expected lock %s/%s (Lease) does not exist.", missingNS, missingLease),
		fmt.Sprintf("The Lease lock %s/%s, declared with --expect, has not existed for longer than the alert's grace period", missingNS, missingLease),
		"last holder: worker-a.")

	mark = env.receiver.mark()
	s.candidate(missingNS, missingLease, "worker-b", election.Fast, false)
	env.receiver.wait(t, mark, match{"resolved", want}, 2*time.Minute)
	waitProm(t, time.Minute, present, eq(1))
}
