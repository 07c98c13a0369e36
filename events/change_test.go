package events

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/lease-exporter/lease-exporter/lock"
)

func reasons(ss []sent) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.c.Reason)
	}
	return out
}

// A crash failover, a graceful handover, a coordinated election's new preference and a
// deletion each make their one Event, with the facts the note carries: renewals and first
// sight make none.
func TestTrackerTurnsEachLeadershipChangeIntoOneEvent(t *testing.T) {
	r := &recorder{}
	tr := newTracker([]lock.Class{lock.ClassLeaderElection}, nil, r.send)
	f := newFeed(t, "kube-system", "scheduler", tr)

	f.see("a", 0, false) // first sight, in the initial list
	for s := 2; s <= 10; s += 2 {
		f.see("a", time.Duration(s)*time.Second, true)
	}
	if got := r.take(); len(got) != 0 {
		t.Fatalf("first sight and renewals sent %v, want nothing", reasons(got))
	}
	// a crashes after its renewal at 10 s; its lease (15 s) expires at 25 s; b takes over at 27 s.
	f.see("b", 27*time.Second, true)
	got := r.take()
	if len(got) != 1 || got[0].c.Reason != ReasonLeaderChanged {
		t.Fatalf("crash failover sent %v, want one LeaderChanged", reasons(got))
	}
	c := got[0].c
	if c.Old != "a" || c.New != "b" || c.Ended != lock.Expired || c.Leaderless != 2*time.Second || got[0].typ != corev1.EventTypeWarning {
		t.Errorf("crash failover: %+v (%s), want a→b, expired, 2s leaderless, Warning", c, got[0].typ)
	}
	if got[0].ref.Kind != "Lease" || got[0].ref.APIVersion != "coordination.k8s.io/v1" || got[0].ref.Namespace != "kube-system" ||
		got[0].ref.Name != "scheduler" || got[0].ref.UID == "" {
		t.Errorf("regarding %+v, want the Lease kube-system/scheduler with its UID", got[0].ref)
	}
	// b renews, then releases at 40 s; c takes the released lock at 40.5 s.
	f.see("b", 29*time.Second, true)
	f.see("", 40*time.Second, true)
	f.see("c", 40*time.Second+500*time.Millisecond, true)
	got = r.take()
	if strings.Join(reasons(got), ",") != ReasonLeaseReleased+","+ReasonLeaderChanged {
		t.Fatalf("graceful handover sent %v, want LeaseReleased, LeaderChanged", reasons(got))
	}
	if rel := got[0].c; rel.Old != "b" || rel.Held != 13*time.Second {
		t.Errorf("release: %+v, want b after 13s (27 s to 40 s)", rel)
	}
	if ch := got[1].c; ch.Old != "b" || ch.New != "c" || ch.Ended != lock.Released || ch.Leaderless != 500*time.Millisecond || ch.Held != 13*time.Second || got[1].typ != corev1.EventTypeNormal {
		t.Errorf("handover: %+v (%s), want b→c released after 13s, 0.5s leaderless, Normal", ch, got[1].typ)
	}
	// The API server names a preferred holder: one Event; its renewals repeat it: none.
	f.preferred = "d"
	f.see("c", 42*time.Second, true)
	f.see("c", 44*time.Second, true)
	got = r.take()
	if len(got) != 1 || got[0].c.Reason != ReasonPreferredHolderChanged || got[0].c.New != "d" || got[0].c.Strategy != "OldestEmulationVersion" {
		t.Fatalf("new preference sent %+v, want one PreferredHolderChanged to d", got)
	}
	// c yields by releasing to the preferred d: a handover.
	f.see("", 45*time.Second, true)
	if got = r.take(); len(got) != 1 || got[0].c.Ended != lock.HandedOver {
		t.Fatalf("release to the preferred holder sent %+v, want one LeaseReleased ended handed_over", got)
	}
	tr.Gone(f.prev, t0.Add(50*time.Second).UnixMicro(), true)
	if got = r.take(); len(got) != 1 || got[0].c.Reason != ReasonLeaseDeleted || got[0].c.Still {
		t.Fatalf("deletion sent %+v, want one LeaseDeleted of a lock nobody held", got)
	}
}

// A change found in a relist after a watch gap is written with only what the records show,
// as lock.Classify names it for the status page too: a take acquired after the previous
// lease ran out ended it expired, one within it ended unknown how; how long the lock was
// leaderless and how long the tenure lasted are never guessed.
func TestTrackerSaysOnlyWhatARelistShows(t *testing.T) {
	r := &recorder{}
	tr := newTracker([]lock.Class{lock.ClassLeaderElection}, nil, r.send)
	f := newFeed(t, "ns", "l", tr)
	f.see("a", 0, true)
	f.see("b", 60*time.Second, false) // acquired at 60 s; a's lease ran out at 15 s
	f.see("b", 62*time.Second, true)
	f.see("c", 70*time.Second, false) // acquired at 70 s, within b's lease (to 77 s)
	got := r.take()
	if len(got) != 2 || got[0].c.Ended != lock.Expired || got[1].c.Ended != lock.Unknown {
		t.Fatalf("relisted changes sent %+v, want two LeaderChanged, ended expired then unknown", got)
	}
	for _, e := range got {
		if e.c.Leaderless != unknown || e.c.Held != unknown {
			t.Errorf("relisted change %+v: want leaderless time and tenure length unknown", e.c)
		}
		if note := e.c.Note(); strings.Contains(note, "Without a leader") || strings.Contains(note, "lasted") {
			t.Errorf("note %q gives a leaderless time or a tenure length", note)
		}
	}
	if note := got[1].c.Note(); !strings.Contains(note, "unknown how") {
		t.Errorf("note %q: want it to say the ending is unknown", note)
	}
}

// Only the classes asked for make Events: by default node heartbeats make none, whatever
// they do.
func TestTrackerIgnoresClassesNotAskedFor(t *testing.T) {
	r := &recorder{}
	tr := newTracker([]lock.Class{lock.ClassLeaderElection}, nil, r.send)
	f := newFeed(t, "kube-node-lease", "node-1", tr)
	f.see("node-1", 0, true)
	f.see("node-1", 100*time.Second, true) // back after its lease lapsed
	f.see("other", 200*time.Second, true)
	tr.Gone(f.prev, t0.Add(300*time.Second).UnixMicro(), true)
	if got := r.take(); len(got) != 0 {
		t.Fatalf("node heartbeat sent %v, want nothing with the default classes", reasons(got))
	}
}

// The sweep writes LeaseExpired once, a lease duration (at least MinExpiredGrace) after the
// expiry, for a lock it saw held, and never while the view is stale (a broken watch is no
// expiry); an expected lock that does not exist is written once per absence, only from a
// current, synced view.
func TestSweepWritesExpiryOnceAndNothingFromAStaleView(t *testing.T) {
	r := &recorder{}
	missing := lock.Ref{Kind: lock.KindLease, Namespace: "kube-system", Name: "kube-scheduler"}
	tr := newTracker([]lock.Class{lock.ClassLeaderElection}, []lock.Ref{missing}, r.send)
	f := newFeed(t, "ns", "l", tr)
	rec := f.see("a", 0, true) // 15 s lease: expires at 15 s, LeaseExpired from 30 s
	v := &view{recs: []*lock.Lease{rec}, existing: map[string]bool{}}
	sweepAt := func(at time.Duration) {
		now := t0.Add(at)
		judged := v.JudgedAt(now)
		tr.sweep(v, v.Has, judged.UnixMicro(), !judged.Before(now))
	}
	sweepAt(2 * time.Second) // not synced: every lock would read as missing
	v.synced, v.staleAt = true, t0.Add(time.Second)
	sweepAt(3 * time.Second) // synced but stale: a lock created meanwhile would read as missing
	if got := r.take(); len(got) != 0 {
		t.Fatalf("sweeps of an unsynced, then stale view sent %v, want nothing", reasons(got))
	}
	v.staleAt = time.Time{}
	sweepAt(5 * time.Second)
	if got := r.take(); len(got) != 1 || got[0].c.Reason != ReasonExpectedLeaseMissing || !strings.Contains(got[0].c.Note(), "kube-system/kube-scheduler") {
		t.Fatalf("first sweep of a current view sent %+v, want ExpectedLeaseMissing for kube-system/kube-scheduler", got)
	}
	// The watch breaks at 6 s: the view stays judged there, and nothing expires.
	v.staleAt = t0.Add(6 * time.Second)
	for s := 10; s <= 90; s += 10 {
		sweepAt(time.Duration(s) * time.Second)
	}
	if got := r.take(); len(got) != 0 {
		t.Fatalf("sweeps of a stale view sent %v, want nothing", reasons(got))
	}
	v.staleAt = time.Time{}
	sweepAt(29 * time.Second) // expired 14 s ago: within the grace, a follower may still take it
	if got := r.take(); len(got) != 0 {
		t.Fatalf("sweep within the grace sent %v, want nothing", reasons(got))
	}
	sweepAt(31 * time.Second)
	sweepAt(33 * time.Second)
	got := r.take()
	if len(got) != 1 || got[0].c.Reason != ReasonLeaseExpired || got[0].c.Old != "a" || got[0].typ != corev1.EventTypeWarning {
		t.Fatalf("sweeps past the grace sent %+v, want one LeaseExpired of a", got)
	}
	if got[0].c.Leaderless != 16*time.Second || got[0].c.Held != 15*time.Second {
		t.Errorf("expiry %+v: want expired 16s ago after holding 15s", got[0].c)
	}
	// The expected lock appears, then goes again: a second ExpectedLeaseMissing.
	v.existing["Lease/kube-system/kube-scheduler"] = true
	sweepAt(35 * time.Second)
	delete(v.existing, "Lease/kube-system/kube-scheduler")
	sweepAt(37 * time.Second)
	sweepAt(39 * time.Second)
	if got := r.take(); len(got) != 1 || got[0].c.Reason != ReasonExpectedLeaseMissing {
		t.Fatalf("expected lock gone again sent %v, want one ExpectedLeaseMissing", reasons(got))
	}
}

// A replica that is not the writer states no missing lock, and does not mark it stated: once
// elected, it writes the ExpectedLeaseMissing a crashed writer may never have written.
func TestMissingLockIsStatedByWhicheverReplicaWrites(t *testing.T) {
	r := &recorder{notWriter: true}
	missing := lock.Ref{Kind: lock.KindLease, Namespace: "kube-system", Name: "kube-scheduler"}
	tr := newTracker([]lock.Class{lock.ClassLeaderElection}, []lock.Ref{missing}, r.send)
	v := &view{synced: true, existing: map[string]bool{}}
	for s := 2; s <= 10; s += 2 {
		tr.sweep(v, v.Has, t0.Add(time.Duration(s)*time.Second).UnixMicro(), true)
	}
	r.notWriter = false
	tr.sweep(v, v.Has, t0.Add(12*time.Second).UnixMicro(), true)
	tr.sweep(v, v.Has, t0.Add(14*time.Second).UnixMicro(), true)
	if got := r.take(); len(got) != 1 || got[0].c.Reason != ReasonExpectedLeaseMissing {
		t.Fatalf("the newly elected writer sent %v, want one ExpectedLeaseMissing", reasons(got))
	}
}

// A lock held with a long lease (OpenShift's 137 s, its followers polling every 26 s) is
// not reported expired while a follower may still be on its way.
func TestSweepGraceIsTheLeaseDuration(t *testing.T) {
	r := &recorder{}
	tr := newTracker([]lock.Class{lock.ClassLeaderElection}, nil, r.send)
	f := newFeed(t, "openshift-kube-scheduler", "kube-scheduler", tr)
	f.dur = 137
	rec := f.see("a", 0, true)
	v := &view{recs: []*lock.Lease{rec}, synced: true}
	tr.sweep(v, v.Has, t0.Add(time.Second).UnixMicro(), true)
	tr.sweep(v, v.Has, t0.Add((137+30)*time.Second).UnixMicro(), true) // 30 s past expiry
	if got := r.take(); len(got) != 0 {
		t.Fatalf("30 s after a 137 s lease expired sent %v, want nothing yet", reasons(got))
	}
	tr.sweep(v, v.Has, t0.Add((137+138)*time.Second).UnixMicro(), true)
	if got := r.take(); len(got) != 1 || got[0].c.Reason != ReasonLeaseExpired {
		t.Fatalf("a lease duration after the expiry sent %v, want LeaseExpired", reasons(got))
	}
}

// A relist that shows a lock recreated observes the new incarnation before it reports the
// old one gone: the new one stays tracked, and its next change is written.
func TestRecreatedLockStaysTrackedAfterARelist(t *testing.T) {
	r := &recorder{}
	tr := newTracker([]lock.Class{lock.ClassLeaderElection}, nil, r.send)
	old := newFeed(t, "ns", "l", tr)
	old.see("a", 0, true)
	recreated := newFeed(t, "ns", "l", tr)
	recreated.uid = "9f3c2b1a-0000-4000-8000-000000000001"
	recreated.see("x", 60*time.Second, false)                    // the relist: the new incarnation first...
	tr.Gone(old.prev, t0.Add(60*time.Second).UnixMicro(), false) // ...then the old one gone
	if got := r.take(); len(got) != 1 || got[0].c.Reason != ReasonLeaseDeleted || got[0].c.Old != "a" {
		t.Fatalf("the relist sent %+v, want one LeaseDeleted of a's incarnation", got)
	}
	recreated.see("y", 70*time.Second, true)
	if got := r.take(); len(got) != 1 || got[0].c.Reason != ReasonLeaderChanged || got[0].c.Old != "x" {
		t.Fatalf("the recreated lock's change sent %+v, want LeaderChanged from x", got)
	}
}

// A lock found expired at start-up is old news: the sweep writes no LeaseExpired for an
// expiry it did not see happen.
func TestSweepIgnoresLocksExpiredBeforeItLooked(t *testing.T) {
	r := &recorder{}
	tr := newTracker([]lock.Class{lock.ClassLeaderElection}, nil, r.send)
	f := newFeed(t, "ns", "abandoned", tr)
	rec := f.see("gone", 0, false)
	v := &view{recs: []*lock.Lease{rec}, synced: true}
	for s := 3600; s <= 3700; s += 20 {
		tr.sweep(v, v.Has, t0.Add(time.Duration(s)*time.Second).UnixMicro(), true)
	}
	if got := r.take(); len(got) != 0 {
		t.Fatalf("an hour-old expiry sent %v, want nothing", reasons(got))
	}
}
