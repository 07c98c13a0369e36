package e2e

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

// TestSplitBrain joins real client-go electors, each a process of its own scraped by
// Prometheus as a Pod, with the exporter's view of their Lease, through the shipped rules.
func TestSplitBrain(t *testing.T) {
	env.Shared(t)
	t.Run("PausedLeader", func(t *testing.T) { t.Parallel(); testPausedLeader(t, "e2e-pause", pauseTimings, 5) })
	// The components' own timings, to measure the window operators get by default.
	t.Run("PausedLeaderDefaults", func(t *testing.T) {
		t.Parallel()
		testPausedLeader(t, "e2e-pause-defaults", election.Components, 2)
	})
	t.Run("MisconfiguredNamespace", func(t *testing.T) { t.Parallel(); testMisconfiguredNamespace(t) })
}

// testPausedLeader pauses the leader with SIGSTOP until the follower has taken the Lease
// over, resumes it, and measures how long the resumed process still reports leading: the real
// window of double leadership. It must be shorter than the alerts' `for`, and neither it nor a
// graceful handover may page. docs/alerts.md reports the numbers it logs.
//
// A pause can catch the leader in the middle of a renewal, past the renewal's deadline when it
// resumes. The process then steps down before its first scrape, and its release
// (ReleaseOnCancel) reads the Lease, still believes it the holder and empties it: client-go
// v0.36's release() judges leadership by its stale record, not by what it read. The successor,
// robbed, reports leading for its renew deadline while the Lease moves to whoever takes it
// next. That is double leadership too, from the other side; the test measures it as well and
// holds it to the same bound.
func testPausedLeader(t *testing.T, ns string, tm election.Timings, pauses int) {
	const lease = "ctrl"
	s := newScenario(t, ns, lease)
	mark := env.receiver.mark()
	start := time.Now()
	a, b := s.participantTimed(ns, ns, lease, "ctrl-a", tm), s.participantTimed(ns, ns, lease, "ctrl-b", tm)
	leader, follower := waitParticipantLeader(t, a, b)
	waitJoined(t, ns, lease, leader.Pod)

	var windows, robbed, acquires, overlaps []time.Duration
	for i := range pauses {
		paused := time.Now()
		if err := leader.Pause(); err != nil {
			t.Fatal(err)
		}
		acquired := waitLeading(t, follower, paused)
		time.Sleep(time.Second) // well past the lease, as a long stall is
		resumed := time.Now()
		if err := leader.Resume(); err != nil {
			t.Fatal(err)
		}
		first, off, ok := pollUntilFollower(leader, time.Minute)
		if !ok {
			t.Fatalf("pause %d: %s still reports leading a minute after it was resumed", i+1, leader.Pod)
		}
		w := off.Sub(resumed)
		if first == 1 {
			windows = append(windows, w)
			overlaps = append(overlaps, off.Sub(acquired))
		}
		// A leader paused mid-renewal steps down at once, and its release may empty its
		// successor's Lease and take it again (client-go v0.36): watch it a little over two
		// retry periods. The robbed successor then reports leading until its renew deadline.
		if leadsAgain(leader, 2*tm.RetryPeriod+time.Second) {
			v, at, ok := pollUntilFollower(follower, tm.RenewDeadline+2*tm.RetryPeriod+5*time.Second)
			switch {
			case !ok:
				t.Errorf("pause %d: %s took the Lease again after SIGCONT, and %s still reports leading past its renew deadline", i+1, leader.Pod, follower.Pod)
			case v == 1:
				w = at.Sub(resumed)
				robbed = append(robbed, w)
				t.Logf("pause %d: the resumed leader emptied its successor's Lease and took it again; the successor reported leading for %s after SIGCONT", i+1, w)
			}
		} else if first != 1 {
			t.Logf("pause %d: the resumed leader stepped down before its first scrape (paused mid-renewal); its successor kept the Lease", i+1)
		}
		acquires = append(acquires, acquired.Sub(paused))
		if w >= participantFor {
			t.Errorf("pause %d: double leadership lasted %s, as long as the alerts' for (%s)", i+1, w, participantFor)
		}
		// The successor leads now, or whoever took the Lease after a release emptied it.
		leader, follower = currentLeader(t, ns, lease, a, b)
	}
	t.Logf("timings %+v", tm)
	t.Logf("double leadership after SIGCONT (resumed leader still reporting 1): %s", spread(windows))
	t.Logf("double leadership after SIGCONT (robbed successor still reporting 1): %s", spread(robbed))
	t.Logf("successor acquired after SIGSTOP: %s; successor's acquisition to the old leader's 0: %s", spread(acquires), spread(overlaps))

	// A graceful handover: the leader releases on SIGTERM, a new participant joins.
	leader.Stop()
	waitLeading(t, follower, time.Now().Add(-time.Minute))
	s.participantTimed(ns, ns, lease, "ctrl-c", tm)
	waitJoined(t, ns, lease, follower.Pod)

	// Quiet: wait out the alerts' `for` after the last disturbance, then nothing may have paged.
	time.Sleep(participantFor + 5*time.Second)
	for _, alert := range []string{"LeaseSplitBrain", "LeaseLeaderDisagreement"} {
		if a, _, ok := env.receiver.find(mark, match{"", map[string]string{"alertname": alert, "namespace": ns}}); ok {
			t.Errorf("%s paged across pauses and a handover: %v", alert, a.Labels)
		}
		// What Prometheus saw of it: evaluations (1s apart) with the alert pending.
		q := fmt.Sprintf(`count_over_time(ALERTS{alertname=%q,namespace=%q,alertstate="pending"}[%ds])`,
			alert, ns, int(time.Since(start).Seconds())+1)
		pending, err := promQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s pending in Prometheus: %s", alert, formatSamples(pending))
	}
}

// testMisconfiguredNamespace runs a second release of a controller whose election namespace
// is set by mistake: its Pod runs beside the first release's, but it elects on a same-named
// Lease in another namespace, genuinely leads it and reports 1. Both alerts must page
// through Alertmanager and resolve once it is gone.
func testMisconfiguredNamespace(t *testing.T) {
	const ns, other, lease = "e2e-misconf", "e2e-misconf-other", "op-lock"
	s := newScenario(t, ns, lease)
	s.namespace(other, lease)
	v1 := s.participant(ns, ns, lease, "op-v1-abc")
	waitLeading(t, v1, time.Now().Add(-time.Minute))
	waitJoined(t, ns, lease, v1.Pod)

	mark := env.receiver.mark()
	v2 := s.participant(ns, other, lease, "op-v2-def")
	waitLeading(t, v2, time.Now().Add(-time.Minute))
	began := time.Now()

	split := map[string]string{"alertname": "LeaseSplitBrain", "namespace": ns, "lease": lease, "severity": "critical"}
	a, at := env.receiver.wait(t, mark, match{"firing", split}, 2*time.Minute)
	if !maps.Equal(a.Labels, split) {
		t.Errorf("labels = %v, want exactly %v", a.Labels, split)
	}
	if d := at.Sub(began); d < participantFor {
		t.Errorf("LeaseSplitBrain paged %s after the second leader started, sooner than its for (%s)", d, participantFor)
	}
	checkAnnotations(t, a, "LeaseSplitBrain",
		fmt.Sprintf("More than one participant of %s/%s reports leading.", ns, lease),
		fmt.Sprintf("2 participants report leader_election_master_status 1 for lock %s/%s (pods op-v1-abc, op-v2-def)", ns, lease),
		"the Lease names op-v1-abc_")

	disagree := map[string]string{"alertname": "LeaseLeaderDisagreement", "namespace": ns, "lease": lease, "pod": "op-v2-def", "severity": "warning"}
	a, _ = env.receiver.wait(t, mark, match{"firing", disagree}, time.Minute)
	if !maps.Equal(a.Labels, disagree) {
		t.Errorf("labels = %v, want exactly %v", a.Labels, disagree)
	}
	checkAnnotations(t, a, "LeaseLeaderDisagreement",
		fmt.Sprintf("Pod op-v2-def reports leading %s/%s, but the Lease does not name it.", ns, lease),
		"the Lease names op-v1-abc_")
	// The rightful leader is not accused.
	if a, _, ok := env.receiver.find(mark, match{"", map[string]string{"alertname": "LeaseLeaderDisagreement", "pod": "op-v1-abc"}}); ok {
		t.Errorf("the holder itself is reported: %v", a.Labels)
	}

	mark = env.receiver.mark()
	v2.Stop()
	env.receiver.wait(t, mark, match{"resolved", split}, 2*time.Minute)
	env.receiver.wait(t, mark, match{"resolved", disagree}, time.Minute)
}

// waitParticipantLeader waits until one of a and b leads and returns it first.
func waitParticipantLeader(t *testing.T, a, b *election.Participant) (leader, follower *election.Participant) {
	t.Helper()
	eventually(t, time.Minute, "a participant to lead", func() (bool, string) {
		if _, ok := a.LeadingSince(); ok {
			leader, follower = a, b
		} else if _, ok := b.LeadingSince(); ok {
			leader, follower = b, a
		}
		return leader != nil, fmt.Sprintf("events a=%v b=%v", a.Events(), b.Events())
	})
	return leader, follower
}

// waitLeading waits until p reports a leadership term begun after since, and returns its start.
func waitLeading(t *testing.T, p *election.Participant, since time.Time) time.Time {
	t.Helper()
	var at time.Time
	eventually(t, time.Minute, p.Pod+" to lead", func() (bool, string) {
		var ok bool
		at, ok = p.LeadingSince()
		return ok && at.After(since), fmt.Sprintf("events %v", p.Events())
	})
	return at
}

// pollUntilFollower scrapes p's /metrics as fast as it answers until it reports 0, and
// returns the first value read and when it read 0; ok is false if it still reported
// leading after limit.
func pollUntilFollower(p *election.Participant, limit time.Duration) (first float64, off time.Time, ok bool) {
	first = -1
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		v, err := p.Status()
		if err != nil {
			continue
		}
		if first < 0 {
			first = v
		}
		if v == 0 {
			return first, time.Now(), true
		}
	}
	return first, time.Time{}, false
}

// waitJoined waits until Prometheus' recordings agree: the Lease's holder is pod, and pod is
// the only participant reporting leading.
func waitJoined(t *testing.T, ns, lease, pod string) {
	t.Helper()
	eventually(t, time.Minute, "Prometheus to join "+pod+" with the Lease", func() (bool, string) {
		got, detail := joined(ns, lease)
		return got == pod, detail
	})
}

// joined is the pod Prometheus' recordings join with the Lease, "" unless they agree: the
// Lease's holder is the one participant reporting leading.
func joined(ns, lease string) (pod, detail string) {
	holder := fmt.Sprintf(`namespace_lease_pod:lease_info:relabel{namespace=%q,lease=%q}`, ns, lease)
	leading := fmt.Sprintf(`namespace_lease_pod:leader_election_master_status:max{namespace=%q,lease=%q}`, ns, lease)
	h, err1 := promQuery(holder)
	l, err2 := promQuery(leading)
	detail = fmt.Sprintf("holder: %s (%v); leading: %s (%v)", formatSamples(h), err1, formatSamples(l), err2)
	if err1 == nil && err2 == nil && len(h) == 1 && len(l) == 1 && h[0].Metric["pod"] == l[0].Metric["pod"] {
		pod = h[0].Metric["pod"]
	}
	return pod, detail
}

// currentLeader waits until Prometheus and the participants themselves agree on which of a
// and b leads (Prometheus' samples alone may still be from before a change), and returns it
// first.
func currentLeader(t *testing.T, ns, lease string, a, b *election.Participant) (leader, follower *election.Participant) {
	t.Helper()
	eventually(t, time.Minute, "Prometheus and the participants to agree who leads", func() (bool, string) {
		pod, detail := joined(ns, lease)
		va, errA := a.Status()
		vb, errB := b.Status()
		switch {
		case errA != nil || errB != nil:
		case pod == a.Pod && va == 1 && vb == 0:
			leader, follower = a, b
		case pod == b.Pod && vb == 1 && va == 0:
			leader, follower = b, a
		}
		return leader != nil, fmt.Sprintf("%s; %s reports %v (%v), %s %v (%v)", detail, a.Pod, va, errA, b.Pod, vb, errB)
	})
	return leader, follower
}

// leadsAgain reports whether p, which reports 0, reports leading within limit.
func leadsAgain(p *election.Participant, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if v, err := p.Status(); err == nil && v == 1 {
			return true
		}
	}
	return false
}

// spread renders durations as min / median / max and each value, in milliseconds.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }
	all := make([]string, len(ds))
	for i, d := range ds {
		all[i] = ms(d)
	}
	return fmt.Sprintf("min %s, median %s, max %s (each: %v)", ms(s[0]), ms(s[len(s)/2]), ms(s[len(s)-1]), all)
}
