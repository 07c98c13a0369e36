package integration_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// Scrape intervals. The fast one is for watching a failover, so that the first scrape
// showing the new holder comes soon after the takeover and the counts are read at that step.
const (
	poll     = 200 * time.Millisecond
	fastPoll = 50 * time.Millisecond
	deadline = 60 * time.Second
)

// startPool runs n client-go candidates with election.Fast timings (4s lease, 2s renew
// deadline, 1s retry) for ns/name until the test ends.
func startPool(t *testing.T, ns, name string, n int, release bool) *election.Pool {
	t.Helper()
	pool, err := election.StartPool(context.Background(), env.Client, ns, name, name, n, election.Fast, release)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.StopAll)
	return pool
}

// waitSteady waits until the candidates, the API server and the exporter agree on a single
// leader, and returns it with the exporter's view at that moment.
func waitSteady(t *testing.T, p *leaseProbe, pool *election.Pool) (*election.Candidate, leaseMetrics) {
	t.Helper()
	var leader *election.Candidate
	m := p.until(t, deadline, poll, "candidates, API server and exporter agree on one leader", func(m leaseMetrics) error {
		leader = nil
		for _, c := range pool.Candidates {
			if c.Leading() {
				if leader != nil {
					return fmt.Errorf("both %s and %s believe they lead", leader.Identity, c.Identity)
				}
				leader = c
			}
		}
		if leader == nil {
			return errors.New("no candidate leads yet")
		}
		lease, err := p.api()
		if err != nil {
			return err
		}
		switch {
		case holderOf(lease) != leader.Identity:
			return fmt.Errorf("API server holder %q, leading candidate %s", holderOf(lease), leader.Identity)
		case m.infos > 1:
			return brokenf("%d lease_info series, want exactly 1", m.infos)
		case m.infos == 0:
			return errors.New("no lease_info series yet")
		case m.holder != leader.Identity:
			return fmt.Errorf("exported holder %q, want %s", m.holder, leader.Identity)
		case m.class != "leader-election":
			return brokenf("class %q, want leader-election", m.class)
		case m.v("lease_held") != 1:
			return fmt.Errorf("lease_held %v, want 1", m.v("lease_held"))
		case m.v("lease_transitions_total") != transitionsOf(lease):
			return fmt.Errorf("lease_transitions_total %v, spec.leaseTransitions %v", m.v("lease_transitions_total"), transitionsOf(lease))
		case m.v("lease_duration_seconds") != election.Fast.LeaseDuration.Seconds():
			return fmt.Errorf("lease_duration_seconds %v, want %v", m.v("lease_duration_seconds"), election.Fast.LeaseDuration.Seconds())
		}
		return nil
	})
	return leader, m
}

// checkHeldConsistent checks, within one scrape, that lease_held says what the Lease's own
// numbers say: held iff there is a holder and the renew age is at most the duration. Both are
// evaluated at the same instant by the exporter, so this is exact, not timing-dependent.
func checkHeldConsistent(m leaseMetrics) error {
	want := 0.0
	if m.holder != "" && m.v("lease_renew_age_seconds") <= m.v("lease_duration_seconds") {
		want = 1
	}
	if m.v("lease_held") != want {
		return brokenf("lease_held %v but holder %q, renew age %vs, duration %vs (want %v)",
			m.v("lease_held"), m.holder, m.v("lease_renew_age_seconds"), m.v("lease_duration_seconds"), want)
	}
	return nil
}

func TestElectionSingleLeader(t *testing.T) {
	ns := newNamespace(t, "single")
	pool := startPool(t, ns, "single", 3, false)
	p := newProbe(env.exp, ns, "single")
	leader, m := waitSteady(t, p, pool)
	t.Logf("leader %s, lease_transitions_total %v, lease_observed_holder_changes_total %v",
		leader.Identity, m.v("lease_transitions_total"), m.v("lease_observed_holder_changes_total"))
	if err := checkHeldConsistent(m); err != nil {
		p.fatalf(t, "%v", err)
	}
}

// A leader that crashes stops renewing; the Lease must read as not held once it expires, and
// a follower takes over ~1-2s later (its retry period), which must count exactly once.
func TestElectionCrashedLeader(t *testing.T) {
	crashedLeader(t, env.exp, "crash")
}

// TestElectionUnbatchedWatch runs the crash scenario through an exporter that reads each
// watch event as it arrives, over HTTP/2 (--kube.watch-batch-interval=0), the path every
// other test's batched HTTP/1.1 watch replaces by default.
func TestElectionUnbatchedWatch(t *testing.T) {
	crashedLeader(t, env.StartReady(t, env.Bin, "--metrics.extended", "--kube.watch-batch-interval=0"), "unbatched")
}

func crashedLeader(t *testing.T, exp *exporterproc.Exporter, prefix string) {
	ns := newNamespace(t, prefix)
	pool := startPool(t, ns, prefix, 3, false)
	p := newProbe(exp, ns, prefix)
	old, before := waitSteady(t, p, pool)

	// Stand the followers down before the crash. A follower takes over on its first retry
	// after the Lease expired by its own observation, which can come milliseconds after the
	// expiry the exporter judges from renewTime: the window a scrape had to hit was a race,
	// and CI lost it once. Without followers the expired Lease stays as long as the test
	// wants; a successor started afterwards takes over the same expired Lease.
	for _, c := range slices.Clone(pool.Candidates) {
		if c != old {
			pool.Remove(c) // followers hold nothing: stopping them writes nothing
		}
	}
	pool.Remove(old) // release=false: stops renewing and gives nothing up
	expired := p.until(t, deadline, fastPoll, "the exporter shows the crashed leader's Lease expired", func(m leaseMetrics) error {
		if err := checkHeldConsistent(m); err != nil {
			return err
		}
		if m.holder != old.Identity {
			return brokenf("holder %q with no candidate running, want the crashed %s", m.holder, old.Identity)
		}
		if m.v("lease_held") != 0 {
			return errors.New("the crashed leader's Lease has not expired yet")
		}
		return nil
	})
	if got, want := expired.v("lease_transitions_total"), before.v("lease_transitions_total"); got != want {
		p.fatalf(t, "expired Lease: lease_transitions_total %v, want %v (expiry is not a transition)", got, want)
	}
	successor, err := election.Start(context.Background(), env.Client, ns, prefix, prefix+"-successor", election.Fast, false)
	if err != nil {
		t.Fatal(err)
	}
	pool.Add(successor)
	expiredScrapes := 0
	after := p.until(t, deadline, fastPoll, "the successor takes over the expired Lease", func(m leaseMetrics) error {
		if m.infos != 1 {
			return brokenf("%d lease_info series, want exactly 1", m.infos)
		}
		if err := checkHeldConsistent(m); err != nil {
			return err
		}
		switch m.holder {
		case old.Identity:
			if m.v("lease_held") != 0 {
				return brokenf("the crashed leader's expired Lease is held again")
			}
			expiredScrapes++
			return errors.New("the crashed leader still holds the Lease")
		case "":
			return brokenf("holder became empty: a crashed leader releases nothing")
		}
		// First scrape showing the new holder: exactly one transition, by both counts.
		if got, want := m.v("lease_transitions_total"), before.v("lease_transitions_total")+1; got != want {
			return brokenf("lease_transitions_total %v, want %v (one takeover)", got, want)
		}
		if got, want := m.v("lease_observed_holder_changes_total"), before.v("lease_observed_holder_changes_total")+1; got != want {
			return brokenf("lease_observed_holder_changes_total %v, want %v (one takeover)", got, want)
		}
		return nil
	})
	if after.holder != successor.Identity {
		p.fatalf(t, "exporter showed takeover by %s, want the successor %s", after.holder, successor.Identity)
	}
	// The margin: how long the expired-but-not-taken-over window stayed visible.
	t.Logf("%s crashed; expired for %d scrapes (%s apart) until %s took over", old.Identity, expiredScrapes, fastPoll, after.holder)
	leader, _ := waitSteady(t, p, pool)
	if leader.Identity != after.holder {
		p.fatalf(t, "exporter showed takeover by %s, but %s leads now", after.holder, leader.Identity)
	}
}

// ReleaseOnCancel hands the Lease over without waiting for expiry. client-go's release writes
// holderIdentity "" and leaseDurationSeconds 1 but keeps leaseTransitions; the follower that
// acquires the released Lease then adds one. So a handoff is one transition, and one observed
// change of leadership too: the release alone is not one.
func TestElectionGracefulHandoff(t *testing.T) {
	ns := newNamespace(t, "handoff")
	pool := startPool(t, ns, "handoff", 3, true)
	p := newProbe(env.exp, ns, "handoff")
	old, before := waitSteady(t, p, pool)
	transitions := before.v("lease_transitions_total")
	observed := before.v("lease_observed_holder_changes_total")

	pool.Remove(old) // returns after the release was written
	sawReleased := false
	after := p.until(t, deadline, fastPoll, "a follower acquires the released Lease", func(m leaseMetrics) error {
		if m.infos != 1 {
			return brokenf("%d lease_info series, want exactly 1", m.infos)
		}
		if err := checkHeldConsistent(m); err != nil {
			return err
		}
		switch m.holder {
		case old.Identity:
			return errors.New("the exporter has not seen the release yet")
		case "":
			sawReleased = true
			if m.v("lease_transitions_total") != transitions {
				return brokenf("released Lease: lease_transitions_total %v, want %v (release is not a transition)", m.v("lease_transitions_total"), transitions)
			}
			if m.v("lease_observed_holder_changes_total") != observed {
				return brokenf("released Lease: lease_observed_holder_changes_total %v, want %v (release is not a change of leadership)", m.v("lease_observed_holder_changes_total"), observed)
			}
			return errors.New("released, no new holder yet")
		}
		if got := m.v("lease_transitions_total"); got != transitions+1 {
			return brokenf("lease_transitions_total %v, want %v (release keeps the count, reacquire adds 1)", got, transitions+1)
		}
		if got := m.v("lease_observed_holder_changes_total"); got != observed+1 {
			return brokenf("lease_observed_holder_changes_total %v, want %v (leader -> \"\" -> follower is one change)", got, observed+1)
		}
		return nil
	})
	t.Logf("handoff %s -> %s; released state seen in a scrape: %v", old.Identity, after.holder, sawReleased)
	leader, _ := waitSteady(t, p, pool)
	if leader.Identity != after.holder {
		p.fatalf(t, "exporter showed handoff to %s, but %s leads now", after.holder, leader.Identity)
	}
}
