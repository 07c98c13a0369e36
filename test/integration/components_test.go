package integration_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
	"github.com/lease-exporter/lease-exporter/lock"
)

// The components run with their own leader-election defaults (15 s lease, 10 s renew
// deadline, 2 s retry), so the leaderless times measured here are what a cluster sees.

// acquiredLog is what client-go's leader elector logs (klog, verbosity 0) once a process
// holds the Lease. kube-scheduler and kube-controller-manager exit when they lose it, so of
// the live processes only the leader has logged it; that maps the opaque <hostname>_<uuid>
// identity in the Lease to a process without guessing.
// The wording differs by version: 1.34's client-go logs `successfully acquired lease ns/name`,
// 1.35's and later `"Successfully acquired lease" lock="ns/name"` (docs/compatibility.md).
var acquiredLog = regexp.MustCompile(`(?i)successfully acquired lease`)

// attemptingLog is what the elector logs as it starts trying: "attempting to acquire leader
// lease ns/name..." up to 1.34, "Attempting to acquire leader lease..." lock="ns/name" after.
var attemptingLog = regexp.MustCompile(`(?i)attempting to acquire leader lease`)

// releaseGate is KEP-5366's feature gate: with it kube-controller-manager releases its Lease
// when it exits (ReleaseOnCancel). Alpha, off by default, from 1.36.
const releaseGate = "--feature-gates=ControllerManagerReleaseLeaderElectionLockOnExit=true"

// The exporter must report the Leases of the real control-plane components, whose
// identities it cannot predict, follow a crash of the leading process, and measure how long
// each election was without a leader: a crash (SIGKILL) fails over when the lease expires;
// a graceful stop (SIGTERM) hands over at the successor's next poll if the leader releases
// (kube-scheduler always, kube-controller-manager with KEP-5366's gate) and fails over like
// a crash if not. Each change's gap in the status page's history must be in
// lease_leaderless_seconds, exactly: a second exporter watching only kube-system measures
// these elections and nothing else.
func TestKubeComponentsLeaderElection(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	identity := regexp.MustCompile("^" + regexp.QuoteMeta(hostname) + "_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
	kube := env.StartReady(t, env.Bin, "--namespaces=kube-system")
	var gaps gapLog
	t.Run("elections", func(t *testing.T) {
		for _, name := range []string{controlplane.KubeScheduler, controlplane.KubeControllerManager} {
			t.Run(name, func(t *testing.T) {
				t.Parallel() // the two elections are independent; overlapping them halves the wait
				e := &componentElection{name: name, identity: identity, kube: kube, gaps: &gaps, gated: map[*controlplane.Process]bool{}}
				e.crash(t)
				e.gracefulStop(t)
				if name == controlplane.KubeControllerManager && minorOf(env.version) >= 36 {
					e.gracefulStop(t, releaseGate) // the gated successor takes over as from an ungated leader
					e.gracefulStop(t, releaseGate) // a gated leader releases
				}
			})
		}
	})
	if !t.Failed() {
		gaps.checkHistogram(t, kube)
	}
}

// componentElection drives one component's election through changes of leader.
type componentElection struct {
	name     string
	identity *regexp.Regexp
	kube     *exporterproc.Exporter // watches kube-system only
	gaps     *gapLog
	procs    []*controlplane.Process        // every process started, stopped ones included
	gated    map[*controlplane.Process]bool // started with releaseGate
	leader   *controlplane.Process
	holder   string // leader's identity in the Lease
}

// start runs one more process of the component with args.
func (e *componentElection) start(t *testing.T, args ...string) *controlplane.Process {
	t.Helper()
	p, err := env.CP.StartComponent(context.Background(), e.name, args...)
	if err != nil {
		t.Fatal(err)
	}
	e.procs = append(e.procs, p)
	e.gated[p] = slices.Contains(args, releaseGate)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("===== %s log (%s), last 40 lines =====\n%s", p.Name(), p.LogPath(), testsuite.Tail(p.Logs(), 40))
		}
		if err := p.Stop(); err != nil {
			t.Errorf("stop %s: %v", p.Name(), err)
		}
	})
	return p
}

// waitLeader waits until one live process other than old leads, as its log, the API server
// and both exporters agree, and records the change's gap from the kube-system exporter's history.
func (e *componentElection) waitLeader(t *testing.T, old string, wantEnded string) leaseMetrics {
	t.Helper()
	probe := newProbe(env.exp, "kube-system", e.name)
	m := probe.until(t, 2*deadline, poll, e.name+": a new leader, as the API server and the exporter show", func(m leaseMetrics) error {
		lease, err := probe.api()
		if err != nil {
			return err
		}
		holder := holderOf(lease)
		if holder == "" || holder == old {
			return fmt.Errorf("the API server's holder is %q", holder)
		}
		if !e.identity.MatchString(holder) {
			return brokenf("API server holder %q is not <hostname>_<uuid>", holder)
		}
		var leading []*controlplane.Process
		for _, p := range e.procs {
			if !p.Exited() && acquiredLog.MatchString(p.Logs()) {
				leading = append(leading, p)
			}
		}
		if len(leading) != 1 {
			return fmt.Errorf("%d live processes logged %q", len(leading), acquiredLog)
		}
		if err := wantHeld(m, holder, transitionsOf(lease)); err != nil {
			return err
		}
		e.leader, e.holder = leading[0], holder
		return nil
	})
	if old == "" {
		return m
	}
	// The change as the kube-system exporter's history has it: the old tenure's ending and the gap.
	var d leaseDetail
	var body string
	end := time.Now().Add(deadline)
	for {
		var err error
		d, body, err = getDetail(t, e.kube.URL(), "kube-system", e.name)
		if err == nil && d.History != nil && len(d.History.Tenures) >= 2 && d.History.Tenures[len(d.History.Tenures)-1].Holder == e.holder {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("%s: the kube-system exporter's history never showed %s after %s: %v\n%s", e.name, e.holder, old, err, body)
		}
		time.Sleep(poll)
	}
	ts := d.History.Tenures
	prev, cur := ts[len(ts)-2], ts[len(ts)-1]
	if prev.Holder != old || prev.Ended != wantEnded || !cur.SeenLive || cur.GapBeforeSeconds == nil {
		t.Fatalf("%s: history after %s: previous tenure %s ended %q, want %s ended %q, with a measured gap:\n%s",
			e.name, wantEnded, prev.Holder, prev.Ended, old, wantEnded, body)
	}
	e.gaps.add(wantEnded, *cur.GapBeforeSeconds)
	t.Logf("%s: %s -> %s: tenure ended %s, %.3f s without a leader; %.3f s from its last renewal to the takeover",
		e.name, old, e.holder, wantEnded, *cur.GapBeforeSeconds, cur.From.Sub(prev.LastRenew).Seconds())
	return m
}

// crash starts two processes, waits for a leader and kills it (SIGKILL: no release, the
// Lease must expire): the survivor takes over, counted once by both counters.
func (e *componentElection) crash(t *testing.T) {
	e.start(t)
	e.start(t)
	before := e.waitLeader(t, "", "")
	old, oldProc := e.holder, e.leader
	if err := oldProc.Kill(); err != nil {
		t.Fatal(err)
	}
	after := e.waitLeader(t, old, lock.Expired.String())
	// The takeover counted exactly once, by both counts (another change would have shown first).
	if got, want := after.v("lease_observed_holder_changes_total"), before.v("lease_observed_holder_changes_total")+1; got != want {
		t.Errorf("%s: lease_observed_holder_changes_total %v after the crash, want %v", e.name, got, want)
	}
	if got, want := after.v("lease_transitions_total"), before.v("lease_transitions_total")+1; got != want {
		t.Errorf("%s: lease_transitions_total %v after the crash, want %v", e.name, got, want)
	}
}

// gracefulStop starts a successor with args, then stops the leader with SIGTERM: a leader
// that releases (kube-scheduler; kube-controller-manager with releaseGate) ends its tenure
// released, any other expired.
func (e *componentElection) gracefulStop(t *testing.T, args ...string) {
	e.waitFollowing(t, e.start(t, args...))
	old, oldProc := e.holder, e.leader
	releases := e.name == controlplane.KubeScheduler || e.gated[oldProc]
	if err := oldProc.Stop(); err != nil {
		t.Fatal(err)
	}
	ended := lock.Expired
	if releases {
		ended = lock.Released
	}
	e.waitLeader(t, old, ended.String())
}

// waitFollowing waits until p tries the Lease: its log says it is attempting to acquire it.
func (e *componentElection) waitFollowing(t *testing.T, p *controlplane.Process) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !attemptingLog.MatchString(p.Logs()) {
		if p.Exited() || time.Now().After(end) {
			t.Fatalf("%s never attempted to acquire the Lease:\n%s", p.Name(), testsuite.Tail(p.Logs(), 20))
		}
		time.Sleep(poll)
	}
}

// gapLog collects every change's gap, by how the previous tenure ended.
type gapLog struct {
	mu   sync.Mutex
	gaps map[string][]float64
}

func (g *gapLog) add(ended string, seconds float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gaps == nil {
		g.gaps = map[string][]float64{}
	}
	g.gaps[ended] = append(g.gaps[ended], seconds)
}

// checkHistogram checks that kube's lease_leaderless_seconds holds exactly the gaps logged:
// per ending, the count, the sum (the history's JSON rounds to microseconds) and each
// bucket.
func (g *gapLog) checkHistogram(t *testing.T, kube *exporterproc.Exporter) {
	t.Helper()
	s, err := kube.Scrape()
	if err != nil {
		t.Fatal(err)
	}
	for _, ended := range []string{lock.Released.String(), lock.Expired.String(), lock.TakenOver.String()} {
		want := g.gaps[ended]
		h := s.Histogram("lease_leaderless_seconds", map[string]string{"class": "leader-election", "ended": ended})
		if h == nil {
			t.Errorf("no lease_leaderless_seconds{class=\"leader-election\",ended=%q} series", ended)
			continue
		}
		var sum float64
		for _, x := range want {
			sum += x
		}
		if h.GetSampleCount() != uint64(len(want)) || abs(h.GetSampleSum()-sum) > 1e-5*float64(len(want)+1) {
			t.Errorf("ended=%s: histogram count %d, sum %.6f; the history's gaps %v (sum %.6f)", ended, h.GetSampleCount(), h.GetSampleSum(), want, sum)
		}
		for _, b := range h.GetBucket() {
			var n uint64
			for _, x := range want {
				if x <= b.GetUpperBound() {
					n++
				}
			}
			if b.GetCumulativeCount() != n {
				t.Errorf("ended=%s: bucket le=%g holds %d, the history's gaps %v put %d there", ended, b.GetUpperBound(), b.GetCumulativeCount(), want, n)
			}
		}
		t.Logf("lease_leaderless_seconds{ended=%q}: count %d, sum %.3f s; gaps %v", ended, h.GetSampleCount(), h.GetSampleSum(), want)
	}
}

// minorOf is the minor version of a GitVersion such as v1.36.3, 0 if it has none.
func minorOf(version string) int {
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	if len(parts) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(parts[1])
	return n
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
