package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

// TestAlertsLeaseRenewStorm: a real client-go elector with a 100 ms retry period renews its
// Lease ten times a second, one with client-go's defaults every 2 s. LeaseRenewStorm, from the
// exporter's lease_observed_renewals_total through the shipped expression, pages for the
// first after its `for` and never for the second; a calm successor resolves it.
func TestAlertsLeaseRenewStorm(t *testing.T) {
	env.Shared(t)
	const ns = "e2e-storm"
	s := newScenario(t, ns, "stormy", "calm")
	storm := election.Timings{LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond}
	defaults := election.Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
	stormy := s.candidate(ns, "stormy", "stormy-a", storm, false)
	s.candidate(ns, "calm", "calm-a", defaults, false)
	waitProm(t, time.Minute, sel("lease_held", ns, "stormy"), eq(1))
	waitProm(t, time.Minute, sel("lease_held", ns, "calm"), eq(1))
	mark := env.receiver.mark()
	began := time.Now()

	want := map[string]string{"alertname": "LeaseRenewStorm", "namespace": ns, "lease": "stormy",
		"job": exporterJobName, "class": "leader-election", "kind": "Lease", "severity": "warning"}
	a := env.receiver.waitPage(t, mark, want, began, renewStormFor, renewStormFor+2*time.Minute)
	checkAnnotations(t, a, "LeaseRenewStorm", fmt.Sprintf("Lease %s/stormy is renewed far too often.", ns),
		fmt.Sprintf("Lease %s/stormy has been written", ns), "times a second over the last 1 minute and more")
	if m := regexp.MustCompile(`written ([0-9.]+) times a second`).FindStringSubmatch(a.Annotations["description"]); m == nil {
		t.Errorf("the description states no rate: %q", a.Annotations["description"])
	} else if r, _ := strconv.ParseFloat(m[1], 64); r < 2 || r > 11 {
		t.Errorf("the description says %v writes a second; an elector retrying every 100 ms writes up to 10", r)
	}

	// The calm elector has renewed all along: its rate is client-go's 0.5 a second, and it
	// was never even pending.
	calmRate := waitProm(t, time.Minute, fmt.Sprintf("rate(%s[1m])", sel("lease_observed_renewals_total", ns, "calm")),
		func(v float64) bool { return v > 0.2 && v < 1 })
	t.Logf("renewals a second: calm %.2f, stormy as paged %s", calmRate, a.Annotations["description"])
	if ss, err := promQuery(fmt.Sprintf(`count_over_time(ALERTS{alertname="LeaseRenewStorm",namespace=%q,lease="calm"}[10m])`, ns)); err != nil || len(ss) != 0 {
		t.Errorf("LeaseRenewStorm was active for the calm Lease (err %v): %s", err, formatSamples(ss))
	}

	// A calm successor takes over from the stormy elector (which stops without releasing, and
	// whose lease expires in 4 s), so the Lease keeps a leader and only the storm ends.
	s.candidate(ns, "stormy", "stormy-b", defaults, false)
	mark = env.receiver.mark()
	stormy.Stop()
	env.receiver.wait(t, mark, match{"resolved", want}, renewStormWindow+2*time.Minute)
}
