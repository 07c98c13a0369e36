package integration_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// fastElection shortens the components' leader election (defaults 15s/10s/2s) so a failover
// takes seconds; the values satisfy their validation (duration > deadline > 1.2 * retry).
var fastElection = []string{
	"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s",
}

// acquiredLog is what client-go's leader elector logs (klog, verbosity 0) once a process
// holds the Lease. kube-scheduler and kube-controller-manager exit when they lose it, so of
// two live processes only the leader has logged it; that maps the opaque <hostname>_<uuid>
// identity in the Lease to a process without guessing.
// The wording differs by version: 1.34's client-go logs `successfully acquired lease ns/name`,
// 1.35's and later `"Successfully acquired lease" lock="ns/name"` (docs/compatibility.md).
var acquiredLog = regexp.MustCompile(`(?i)successfully acquired lease`)

// The exporter must report the Leases of the real control-plane components, whose
// identities it cannot predict, and follow a crash of the leading process.
func TestKubeComponentsLeaderElection(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	identity := regexp.MustCompile("^" + regexp.QuoteMeta(hostname) + "_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
	for _, name := range []string{controlplane.KubeScheduler, controlplane.KubeControllerManager} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // the two elections are independent; overlapping them halves the wait
			testComponentFailover(t, name, identity)
		})
	}
}

func testComponentFailover(t *testing.T, name string, identity *regexp.Regexp) {
	procs := make([]*controlplane.Process, 2)
	for i := range procs {
		p, err := env.CP.StartComponent(context.Background(), name, fastElection...)
		if err != nil {
			t.Fatal(err)
		}
		procs[i] = p
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("===== %s log (%s), last 40 lines =====\n%s", p.Name(), p.LogPath(), testsuite.Tail(p.Logs(), 40))
			}
			if err := p.Stop(); err != nil {
				t.Errorf("stop %s: %v", p.Name(), err)
			}
		})
	}

	probe := newProbe(env.exp, "kube-system", name)
	var leader, follower *controlplane.Process
	before := probe.until(t, deadline, poll, "one "+name+" leads and the exporter shows it", func(m leaseMetrics) error {
		for _, p := range procs {
			if p.Exited() {
				return brokenf("%s exited:\n%s", p.Name(), testsuite.Tail(p.Logs(), 20))
			}
		}
		lease, err := probe.api()
		if err != nil {
			return err
		}
		holder := holderOf(lease)
		if !identity.MatchString(holder) {
			return fmt.Errorf("API server holder %q is not <hostname>_<uuid>", holder)
		}
		var leading []*controlplane.Process
		for _, p := range procs {
			if acquiredLog.MatchString(p.Logs()) {
				leading = append(leading, p)
			} else {
				follower = p
			}
		}
		if len(leading) != 1 {
			return fmt.Errorf("%d of 2 processes logged %q", len(leading), acquiredLog)
		}
		leader = leading[0]
		return wantHeld(m, holder, transitionsOf(lease))
	})

	if err := leader.Kill(); err != nil { // SIGKILL: no release, the Lease must expire
		t.Fatal(err)
	}
	killed := time.Now()
	after := probe.until(t, deadline, poll, "the surviving "+name+" takes over", func(m leaseMetrics) error {
		if m.infos != 1 {
			return brokenf("%d lease_info series, want exactly 1", m.infos)
		}
		if m.holder == before.holder {
			return errors.New("the killed process still holds the Lease")
		}
		if err := checkHeldConsistent(m); err != nil {
			return err
		}
		// First scrape with a new holder: the takeover counted exactly once, by both counts.
		if got, want := m.v("lease_transitions_total"), before.v("lease_transitions_total")+1; got != want {
			return brokenf("lease_transitions_total %v, want %v", got, want)
		}
		if got, want := m.v("lease_observed_holder_changes_total"), before.v("lease_observed_holder_changes_total")+1; got != want {
			return brokenf("lease_observed_holder_changes_total %v, want %v", got, want)
		}
		if !identity.MatchString(m.holder) {
			return brokenf("new holder %q is not <hostname>_<uuid>", m.holder)
		}
		return nil
	})
	t.Logf("%s: %s (%s) killed; %s took over, exported %s later",
		name, before.holder, leader.Name(), after.holder, time.Since(killed).Round(100*time.Millisecond))

	// The new holder must be the surviving process, and the API server must agree.
	probe.until(t, deadline, poll, "the API server and the survivor's log agree on the new leader", func(m leaseMetrics) error {
		lease, err := probe.api()
		if err != nil {
			return err
		}
		if holderOf(lease) != after.holder {
			return brokenf("API server holder %q, exporter showed %q", holderOf(lease), after.holder)
		}
		if !acquiredLog.MatchString(follower.Logs()) {
			return fmt.Errorf("%s has not logged %q", follower.Name(), acquiredLog)
		}
		return wantHeld(m, after.holder, transitionsOf(lease))
	})
}

// wantHeld checks that one scrape shows holder holding the Lease with the API's transitions.
func wantHeld(m leaseMetrics, holder string, transitions float64) error {
	switch {
	case m.infos != 1 || m.holder != holder:
		return fmt.Errorf("%d lease_info series with holder %q, want one with %q", m.infos, m.holder, holder)
	case m.v("lease_held") != 1:
		return fmt.Errorf("lease_held %v, want 1", m.v("lease_held"))
	case m.v("lease_transitions_total") != transitions:
		return fmt.Errorf("lease_transitions_total %v, spec.leaseTransitions %v", m.v("lease_transitions_total"), transitions)
	}
	return checkHeldConsistent(m)
}
