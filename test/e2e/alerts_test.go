package e2e

import (
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

const runbookPrefix = "https://github.com/lease-exporter/lease-exporter/blob/main/docs/runbooks/"

// TestAlerts drives the per-lease alerts end to end: a real election goes wrong, Prometheus
// evaluates the shipped expressions on the real exporter's series, and the page arrives at
// the receiver. The scenarios use separate Leases and run side by side to save a minute.
// The API server outage (LeaseExporterWatchStale) is in outage_test.go: it runs alone, last.
func TestAlerts(t *testing.T) {
	env.Shared(t)
	t.Run("NoLeader", func(t *testing.T) { t.Parallel(); testNoLeader(t) })
	t.Run("FrequentTransitions", func(t *testing.T) { t.Parallel(); testFrequentTransitions(t) })
	t.Run("NoLeaderQuietOnGracefulHandover", func(t *testing.T) { t.Parallel(); testNoLeaderQuietOnHandover(t) })
}

// testNoLeaderQuietOnHandover stops a leader gracefully (ReleaseOnCancel) beside a waiting
// candidate, which takes the released Lease at its next poll, within its retry period (1 s,
// up to 2.2 s with client-go's jitter). The Lease is without a leader for that long, far
// below LeaseNoLeader's grace (20 s here, 2 m shipped): it never pages, and the exporter's
// history measures the gap.
func testNoLeaderQuietOnHandover(t *testing.T) {
	const ns, lease = "e2e-handover", "graceful"
	s := newScenario(t, ns, lease)
	a := s.candidate(ns, lease, "graceful-a", election.Fast, true)
	eventually(t, time.Minute, "graceful-a to lead", func() (bool, string) { return a.Leading(), "not leading" })
	b := s.candidate(ns, lease, "graceful-b", election.Fast, true)
	waitProm(t, time.Minute, sel("lease_held", ns, lease), eq(1))
	time.Sleep(2 * election.Fast.RetryPeriod) // b has polled and found the Lease held

	mark := env.receiver.mark()
	a.Stop() // releases: holderIdentity ""
	released := time.Now()
	eventually(t, time.Minute, "graceful-b to lead", func() (bool, string) { return b.Leading(), "not leading" })
	took := time.Since(released)
	if limit := 2200*time.Millisecond + time.Second; took > limit {
		t.Errorf("graceful-b took over %s after the release, beyond its retry period with jitter (2.2 s) and a second's slack", took)
	}
	var gap float64
	eventually(t, time.Minute, "the exporter's history to measure the handover", func() (bool, string) {
		d, err := leaseHistory(ns, lease)
		if err != nil || len(d.Tenures) < 2 || d.Tenures[len(d.Tenures)-1].Holder != "graceful-b" {
			return false, fmt.Sprintf("err %v, history %+v", err, d)
		}
		prev, cur := d.Tenures[len(d.Tenures)-2], d.Tenures[len(d.Tenures)-1]
		if prev.Ended != "released" || cur.GapBeforeSeconds == nil {
			return false, fmt.Sprintf("graceful-a's tenure ended %q, gap %v", prev.Ended, cur.GapBeforeSeconds)
		}
		gap = *cur.GapBeforeSeconds
		return true, ""
	})
	if gap <= 0 || gap > took.Seconds()+1 {
		t.Errorf("the history's handover gap is %.3f s; graceful-b led %s after the release", gap, took)
	}
	t.Logf("graceful handover: %.3f s without a leader by the exporter's history (%s by the electors)", gap, took.Round(time.Millisecond))

	// Wait out the grace period and more: no page, and the alert never fired.
	time.Sleep(noLeaderFor + 10*time.Second)
	noLeader := map[string]string{"alertname": "LeaseNoLeader", "namespace": ns, "lease": lease}
	if got, at, ok := env.receiver.find(mark, match{"firing", noLeader}); ok {
		t.Errorf("LeaseNoLeader paged at %s for a graceful handover: %v", at.Format(time.StampMilli), got)
	}
	firing := fmt.Sprintf(`count_over_time(ALERTS{alertname="LeaseNoLeader",alertstate="firing",namespace=%q,lease=%q}[2m])`, ns, lease)
	if ss, err := promQuery(firing); err != nil || len(ss) != 0 {
		t.Errorf("LeaseNoLeader fired for a graceful handover (err %v): %s", err, formatSamples(ss))
	}
}

// testNoLeader crashes the only candidate of a Lease: nobody takes over, the Lease expires,
// and after the grace period LeaseNoLeader pages; a new candidate resolves it.
func testNoLeader(t *testing.T) {
	const ns, lease = "e2e-noleader", "solo"
	s := newScenario(t, ns, lease)
	leader := s.candidate(ns, lease, "solo-a", election.Fast, false)
	eventually(t, time.Minute, "solo-a to lead", func() (bool, string) { return leader.Leading(), "not leading" })
	waitProm(t, time.Minute, sel("lease_held", ns, lease), eq(1))

	// The description finds the last holder with a [1h:1m] subquery, whose steps sit on whole
	// minutes, so the holder is only found once a minute boundary has passed with the Lease in
	// Prometheus. The shipped 2m grace guarantees that; with 20s the test arranges it: the
	// alert fires at least 3s (expiry) + 20s after the crash, so crash no earlier than 15s
	// before the next boundary.
	if crashAt := time.Now().Truncate(time.Minute).Add(time.Minute - 15*time.Second); time.Now().Before(crashAt) {
		time.Sleep(time.Until(crashAt))
	}
	mark := env.receiver.mark()
	leader.Stop() // without release: holderIdentity stays set and the Lease expires
	crashed := time.Now()

	want := map[string]string{"alertname": "LeaseNoLeader", "namespace": ns, "lease": lease,
		"job": exporterJobName, "class": "leader-election", "kind": "Lease", "severity": "critical"}
	a := env.receiver.waitPage(t, mark, want, crashed, noLeaderFor, 2*time.Minute)
	checkAnnotations(t, a, "LeaseNoLeader",
		fmt.Sprintf("Leader-election Lease %s/%s has no leader.", ns, lease),
		fmt.Sprintf("Lease %s/%s has had no valid holder", ns, lease), "last holder: solo-a.")

	mark = env.receiver.mark()
	s.candidate(ns, lease, "solo-b", election.Fast, false)
	env.receiver.wait(t, mark, match{"resolved", want}, 2*time.Minute)
}

// testFrequentTransitions crashes a pool's leader again and again (each time adding a fresh
// candidate), so the Lease changes holder every ~5s. The rule and docs/alerts.md promise an
// alert for MORE than 5 changes in 10 minutes: quiet after the fifth, paging after the sixth.
// Each crash is one new holder and one rise of spec.leaseTransitions, which the merged
// counter the rule reads counts once.
func testFrequentTransitions(t *testing.T) {
	const ns, lease = "e2e-flap", "flappy"
	s := newScenario(t, ns, lease)
	p := s.pool(ns, lease, "flap", 2)
	waitLeader(t, p, "")
	transitions := sel("lease_observed_holder_changes_total", ns, lease)
	base := waitProm(t, time.Minute, transitions, func(float64) bool { return true })
	want := map[string]string{"alertname": "LeaseFrequentTransitions", "namespace": ns, "lease": lease,
		"job": exporterJobName, "class": "leader-election", "kind": "Lease", "severity": "warning"}
	mark := env.receiver.mark()

	for i := 1; i <= 5; i++ {
		s.failover(p, fmt.Sprintf("flap-r%d", i))
	}
	t.Run("QuietAfterFiveTransitions", func(t *testing.T) {
		v := waitProm(t, time.Minute, transitions, func(v float64) bool { return v >= base+5 })
		if v != base+5 {
			t.Fatalf("harness: %g holder changes instead of 5: candidates lost leases on their own (machine overloaded?)", v-base)
		}
		// The rule has no `for`: if 5 were enough, the next evaluations would fire.
		firing := fmt.Sprintf(`ALERTS{alertname="LeaseFrequentTransitions",namespace=%q,lease=%q}`, ns, lease)
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
			ss, err := promQuery(firing)
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) > 0 {
				inc, _ := promQuery(fmt.Sprintf("increase(%s[10m])", transitions))
				t.Fatalf("LeaseFrequentTransitions is active after exactly 5 transitions (the rule says > 5): "+
					"increase(lease_observed_holder_changes_total[10m]) = %s; raw counter went %g -> %g",
					formatSamples(inc), base, v)
			}
		}
	})

	s.failover(p, "flap-r6")
	t.Run("FiresAfterSixTransitions", func(t *testing.T) {
		a, _ := env.receiver.wait(t, mark, match{"firing", want}, time.Minute)
		if !maps.Equal(a.Labels, want) {
			t.Errorf("labels = %v, want exactly %v", a.Labels, want)
		}
		checkAnnotations(t, a, "LeaseFrequentTransitions",
			fmt.Sprintf("Lease %s/%s changes holder frequently.", ns, lease),
			fmt.Sprintf("Lease %s/%s changed holder about", ns, lease))
		// "about N times" is increase() rounded, as of the evaluation that paged: 6 or more,
		// or 5 if it paged one transition early (QuietAfterFiveTransitions reports that).
		d := a.Annotations["description"]
		if m := regexp.MustCompile(`changed holder about (\d+) times`).FindStringSubmatch(d); m == nil {
			t.Errorf("description has no transition count: %q", d)
		} else if n, _ := strconv.Atoi(m[1]); n < 5 {
			t.Errorf("description reports %d transitions, want at least 5: %q", n, d)
		}
	})
}

// checkAnnotations checks the summary exactly, that the description contains each of parts,
// and the runbook link.
func checkAnnotations(t *testing.T, a webhookAlert, alert, summary string, parts ...string) {
	t.Helper()
	if got := a.Annotations["summary"]; got != summary {
		t.Errorf("summary = %q, want %q", got, summary)
	}
	for _, p := range parts {
		if d := a.Annotations["description"]; !strings.Contains(d, p) {
			t.Errorf("description %q does not contain %q", d, p)
		}
	}
	if got, want := a.Annotations["runbook_url"], runbookPrefix+alert+".md"; got != want {
		t.Errorf("runbook_url = %q, want %q", got, want)
	}
}
