package integration_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// Real electors whose clocks are off: the Python client's elector under libfaketime and a
// client-go elector whose lock writes shifted times (client-go has no clock option; its
// elector judges expiry only from its own observations, so shifting what it writes is what a
// skewed host does). The exporter must judge them as they judge each other (issue 12).

// skewTimings are client-go's defaults, which the Python elector uses too (15/10/2).
var skewTimings = election.Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}

// skewedElector is one elector of either client, as the tests need it.
type skewedElector struct {
	identity string
	leading  func() bool
	kill     func() // stop renewing at once, as a crash does
}

// startSkewed starts an elector of client ("python" or "client-go") for ns/name whose clock
// is off by skew.
func startSkewed(t *testing.T, client, ns, name string, skew time.Duration) skewedElector {
	t.Helper()
	id := fmt.Sprintf("%s-%+ds", client, int(skew.Seconds()))
	if client == "python" {
		offset := ""
		if skew != 0 {
			offset = fmt.Sprintf("%+ds", int(skew.Seconds()))
		}
		p, err := election.StartPython(election.PythonOptions{Kubeconfig: env.CP.KubeconfigPath(), Dir: t.TempDir(),
			Namespace: ns, Name: name, Identity: id, Lock: election.PythonLease, Faketime: offset})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			p.Kill()
			if t.Failed() {
				t.Logf("===== python elector %s log =====\n%s", id, testsuite.Tail(p.Log(), 30))
			}
		})
		return skewedElector{identity: id, leading: p.Leading, kill: p.Kill}
	}
	c, err := election.StartConfig(context.Background(), env.Client, election.Config{
		Namespace: ns, Name: name, Identity: id, Timings: skewTimings, Skew: skew})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return skewedElector{identity: id, leading: c.Leading, kill: c.Stop}
}

// waitSkewSeen waits until the exporter shows e as holder with its skew measured.
func waitSkewSeen(t *testing.T, p *leaseProbe, e skewedElector, skew time.Duration) leaseMetrics {
	t.Helper()
	return p.until(t, deadline, poll, e.identity+" leads and its skew is measured", func(m leaseMetrics) error {
		got := m.v("lease_holder_clock_skew_seconds")
		switch {
		case m.holder != e.identity:
			return fmt.Errorf("holder %q", m.holder)
		case math.IsNaN(got):
			return errors.New("no skew measured yet")
		case math.Abs(got-skew.Seconds()) > 2:
			return brokenf("lease_holder_clock_skew_seconds %v, want %v ± 2 s", got, skew.Seconds())
		}
		return nil
	})
}

// A healthy holder whose clock runs 120 s behind is held the whole time (the exporter used
// to call it expired: renewTime was 120 s old by its clock), and a holder with a sane clock
// reads a skew of about zero, slightly negative (watch latency and read batching).
func TestSkewedHolderBehindStaysHeld(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		client string
		skew   time.Duration
	}{{"python", -120 * time.Second}, {"client-go", -120 * time.Second}, {"python", 0}, {"client-go", 0}} {
		t.Run(fmt.Sprintf("%s/%+ds", tc.client, int(tc.skew.Seconds())), func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t, "skew-behind")
			e := startSkewed(t, tc.client, ns, "lock", tc.skew)
			p := newProbe(env.exp, ns, "lock")
			waitSkewSeen(t, p, e, tc.skew)
			if tc.skew == 0 {
				if got := p.mustScrape(t).v("lease_holder_clock_skew_seconds"); got > 0.5 || got < -1.5 {
					p.fatalf(t, "healthy holder's skew %v s, want within -1.5..0.5 s", got)
				}
			}
			// 30 s: two lease durations, fifteen renewals.
			for end := time.Now().Add(2 * skewTimings.LeaseDuration); time.Now().Before(end); time.Sleep(poll) {
				if m := p.mustScrape(t); m.v("lease_held") != 1 || m.holder != e.identity {
					p.fatalf(t, "lease_held %v, holder %q: a healthy holder with its clock %v off is not held", m.v("lease_held"), m.holder, tc.skew)
				}
			}
		})
	}
}

// A holder whose clock runs 300 s ahead dies: the exporter says so within a lease duration
// (plus the renewal interval and scrape) of its death, not 300 s later.
func TestSkewedHolderAheadDiesOnTime(t *testing.T) {
	t.Parallel()
	for _, client := range []string{"python", "client-go"} {
		t.Run(client, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t, "skew-ahead")
			const skew = 300 * time.Second
			e := startSkewed(t, client, ns, "lock", skew)
			p := newProbe(env.exp, ns, "lock")
			waitSkewSeen(t, p, e, skew)
			e.kill()
			killed := time.Now()
			m := p.until(t, deadline, fastPoll, "the dead holder is not held any more", func(m leaseMetrics) error {
				if m.v("lease_held") != 0 {
					return errors.New("still held")
				}
				return nil
			})
			after := time.Since(killed)
			// Its last renewal was at most a retry period before the kill, and the exporter
			// holds a Lease for a duration from the renewal it saw: 13-15 s, plus a scrape.
			if after < skewTimings.LeaseDuration-skewTimings.RetryPeriod-time.Second || after > skewTimings.LeaseDuration+5*time.Second {
				p.fatalf(t, "held went 0 %v after the holder died, want %v-%v (holder %q)", after.Round(100*time.Millisecond),
					skewTimings.LeaseDuration-skewTimings.RetryPeriod-time.Second, skewTimings.LeaseDuration+5*time.Second, m.holder)
			}
			t.Logf("held 0 %v after the kill of a holder whose clock runs %v ahead", after.Round(100*time.Millisecond), skew)
		})
	}
}

// An exporter started while a holder with its clock 120 s behind renews sees it in its initial
// list with a renewTime 120 s old (by its own clock): expired, as far as it can tell, until
// it sees the holder renew live, a retry period later. Then it is held and its skew measured.
// The exporter runs with the default series: eight per leader-election Lease once the skew is
// measured, none for a node-heartbeat Lease on time and one for an overdue one.
func TestFreshExporterJudgesBehindHolderOnFirstRenewal(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "skew-fresh")
	e := startSkewed(t, "client-go", ns, "lock", -120*time.Second)
	waitSkewSeen(t, newProbe(env.exp, ns, "lock"), e, -120*time.Second)

	fresh := env.StartReady(t, env.Bin) // default series
	ready := time.Now()
	p := newProbe(fresh, ns, "lock")
	m := p.until(t, deadline, fastPoll, "held, with its skew measured", func(m leaseMetrics) error {
		if m.v("lease_held") != 1 || math.IsNaN(m.v("lease_holder_clock_skew_seconds")) {
			return errors.New("not yet")
		}
		return nil
	})
	if took := time.Since(ready); took > skewTimings.RetryPeriod+3*time.Second {
		p.fatalf(t, "held only %v after the exporter was ready, want within a retry period (%v) and a few seconds", took, skewTimings.RetryPeriod)
	}
	if m.series != 8 {
		p.fatalf(t, "%d series for a leader-election Lease by default, want 8", m.series)
	}
	checkNodeLeaseSeries(t, fresh)
}

// mustScrape scrapes once and fails the test if the exporter does not answer.
func (p *leaseProbe) mustScrape(t *testing.T) leaseMetrics {
	t.Helper()
	m, err := p.scrape()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkNodeLeaseSeries writes two kubelet-like node Leases, one renewed on time and, after
// it, one whose 1 s lease runs out at once, and waits until exp names the overdue one with
// exactly its one default series (the observed renew time), while the one on time, seen
// before it on the same watch, has none.
func checkNodeLeaseSeries(t *testing.T, exp *exporterproc.Exporter) {
	t.Helper()
	ctx := context.Background()
	base := "node-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	leases := env.Client.CoordinationV1().Leases("kube-node-lease")
	for _, n := range []struct {
		name     string
		duration int32
	}{{base, 40}, {base + "-overdue", 1}} {
		now := metav1.NowMicro()
		if _, err := leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: n.name, OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.name, UID: "x"}}},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(n.name), LeaseDurationSeconds: ptr.To(n.duration), RenewTime: &now},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = leases.Delete(context.Background(), n.name, metav1.DeleteOptions{}) })
	}
	onTime, overdue := newProbe(exp, "kube-node-lease", base), newProbe(exp, "kube-node-lease", base+"-overdue")
	overdue.until(t, deadline, poll, "the overdue node Lease's one default series", func(m leaseMetrics) error {
		switch {
		case m.series == 0:
			return errors.New("not exported yet")
		case m.series != 1 || math.IsNaN(m.v("lease_overdue_observed_renew_timestamp_seconds")):
			return brokenf("%d series, want lease_overdue_observed_renew_timestamp_seconds only", m.series)
		}
		return nil
	})
	if m := onTime.mustScrape(t); m.series != 0 {
		onTime.fatalf(t, "%d series for a node Lease renewed on time, want none by default", m.series)
	}
}
