package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// TestAlertsClockSkew runs the Python client's elector on a Lease under libfaketime, its
// clock 120 s behind (healthy) or 300 s ahead (then killed), through the shipped rules on a
// real Prometheus and Alertmanager (issue 12): the healthy one never pages LeaseNoLeader, the
// dead one pages within the rule's `for` plus a minute, and LeaseHolderClockSkew fires for both.
func TestAlertsClockSkew(t *testing.T) {
	env.Shared(t)
	t.Run("Behind", func(t *testing.T) { t.Parallel(); testSkewBehind(t) })
	t.Run("AheadDies", func(t *testing.T) { t.Parallel(); testSkewAheadDies(t) })
}

// skewedPython starts a Python Lease elector whose clock is off by offset ("-120s").
func skewedPython(t *testing.T, ns, lease, offset string) *election.PythonElector {
	t.Helper()
	if err := election.CheckPython(true); err != nil {
		t.Fatal(err)
	}
	p, err := election.StartPython(election.PythonOptions{Kubeconfig: env.CP.KubeconfigPath(), Dir: t.TempDir(),
		Namespace: ns, Name: lease, Identity: "py" + offset, Lock: election.PythonLease, Faketime: offset})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("===== python elector log =====\n%s", testsuite.Tail(p.Log(), 30))
		}
	})
	eventually(t, time.Minute, "the Python elector to lead", func() (bool, string) { return p.Leading(), "not leading" })
	return p
}

func skewAlert(ns, lease string) map[string]string {
	return map[string]string{"alertname": "LeaseHolderClockSkew", "namespace": ns, "lease": lease, "severity": "warning"}
}

func noLeaderAlert(ns, lease string) map[string]string {
	return map[string]string{"alertname": "LeaseNoLeader", "namespace": ns, "lease": lease}
}

// testSkewBehind watches a healthy holder whose clock runs 120 s behind for five minutes.
func testSkewBehind(t *testing.T) {
	const ns, lease = "e2e-skew-behind", "behind"
	newScenario(t, ns, lease)
	mark := env.receiver.mark()
	skewedPython(t, ns, lease, "-120s")
	waitProm(t, time.Minute, sel("lease_held", ns, lease), eq(1))
	skew := waitProm(t, time.Minute, sel("lease_holder_clock_skew_seconds", ns, lease), func(v float64) bool { return v < -100 })
	if skew < -122 || skew > -118 {
		t.Errorf("lease_holder_clock_skew_seconds %v, want -120 ± 2", skew)
	}
	pending := fmt.Sprintf(`ALERTS{alertname="LeaseNoLeader",namespace=%q,lease=%q}`, ns, lease)
	skewPaged := false
	for end := time.Now().Add(5 * time.Minute); time.Now().Before(end); time.Sleep(time.Second) {
		if ss, err := promQuery(pending); err != nil {
			t.Fatal(err)
		} else if len(ss) > 0 {
			t.Fatalf("LeaseNoLeader %s for a healthy holder whose clock runs 120 s behind", formatSamples(ss))
		}
		if held, err := promQuery(sel("lease_held", ns, lease)); err == nil && len(held) == 1 && held[0].value() != 1 {
			t.Fatalf("lease_held %v for a healthy holder whose clock runs 120 s behind", held[0].value())
		}
		if _, _, ok := env.receiver.find(mark, match{"firing", skewAlert(ns, lease)}); ok {
			skewPaged = true
		}
	}
	if _, _, ok := env.receiver.find(mark, match{"", noLeaderAlert(ns, lease)}); ok {
		t.Fatal("the receiver got LeaseNoLeader for the healthy holder")
	}
	if !skewPaged {
		t.Fatalf("no LeaseHolderClockSkew within 5 minutes for a holder 120 s behind\n%s", env.receiver.dump())
	}
	a, _, _ := env.receiver.find(mark, match{"firing", skewAlert(ns, lease)})
	checkAnnotations(t, a, "LeaseHolderClockSkew",
		fmt.Sprintf("The holder of Lease %s/%s has a skewed clock.", ns, lease), "s behind")
}

// testSkewAheadDies kills a holder whose clock runs 300 s ahead: LeaseNoLeader within the
// rule's `for` (plus the lease duration and evaluation) and a minute.
func testSkewAheadDies(t *testing.T) {
	const ns, lease = "e2e-skew-ahead", "ahead"
	newScenario(t, ns, lease)
	mark := env.receiver.mark()
	p := skewedPython(t, ns, lease, "+300s")
	waitProm(t, time.Minute, sel("lease_held", ns, lease), eq(1))
	a, _ := env.receiver.wait(t, mark, match{"firing", skewAlert(ns, lease)}, clockSkewFor+2*time.Minute)
	checkAnnotations(t, a, "LeaseHolderClockSkew",
		fmt.Sprintf("The holder of Lease %s/%s has a skewed clock.", ns, lease), "s ahead")

	mark = env.receiver.mark()
	p.Kill()
	killed := time.Now()
	_, at := env.receiver.wait(t, mark, match{"firing", noLeaderAlert(ns, lease)}, noLeaderFor+2*time.Minute)
	if d := at.Sub(killed); d > noLeaderFor+time.Minute {
		t.Errorf("LeaseNoLeader %v after the holder (clock 300 s ahead) died, want within the rule's for (%v) + 1m", d.Round(time.Second), noLeaderFor)
	} else {
		t.Logf("LeaseNoLeader %v after the holder whose clock runs 300 s ahead died", d.Round(time.Second))
	}
}
