package election_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

func startCandidate(t *testing.T, cfg election.Config) *election.Candidate {
	t.Helper()
	c, err := election.StartConfig(context.Background(), env.client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// client-go candidates on the old annotation locks write LeaderElectionRecord JSON: acquire,
// renewals, a release (holder "", duration 1) and a takeover that counts a transition.
func TestClientGoAnnotationLocks(t *testing.T) {
	t.Parallel()
	for _, kind := range []election.LockKind{election.LockConfigMap, election.LockEndpoints} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			ns := namespace(t, "cgo-"+strings.ToLower(string(kind)))
			w := watchLock(t, kind, ns, "lock")
			cfg := election.Config{Namespace: ns, Name: "lock", Identity: "cgo-a", Timings: election.Fast, Release: true, Kind: kind}
			a := startCandidate(t, cfg)
			first := w.waitFor(time.Minute, "cgo-a holds", func(r record) bool { return r.holder == "cgo-a" })
			w.waitFor(time.Minute, "a renewal", func(r record) bool { return r.renew.After(first.renew) })
			if p := first.parsed; !p.HasDuration || p.DurationSeconds != 4 || !p.HasTransitions || p.Transitions != 0 || p.AcquireTime != p.RenewTime {
				t.Errorf("first record %s parsed as %+v", first.raw, p)
			}
			a.Stop()
			released := w.waitFor(time.Minute, "a release", func(r record) bool { return r.holder == "" && r.raw != "" })
			if p := released.parsed; p.DurationSeconds != 1 || p.Transitions != 0 {
				t.Errorf("release %s parsed as %+v", released.raw, p)
			}
			cfg.Identity = "cgo-b"
			startCandidate(t, cfg)
			next := w.waitFor(time.Minute, "cgo-b holds", func(r record) bool { return r.holder == "cgo-b" })
			if p := next.parsed; p.Transitions != 1 || p.DurationSeconds != 4 {
				t.Errorf("takeover %s parsed as %+v", next.raw, p)
			}
			if d := next.renew.Sub(next.seen); d > time.Second || d < -3*time.Second {
				t.Errorf("renewTime %v is %v from when the watch delivered it", next.renew, d)
			}
			writeCapture(t, "client-go-"+strings.ToLower(string(kind))+"lock.txt",
				"client-go v0.36 leaderelection with the "+string(kind)+" annotation lock as client-go shipped it (election.AnnotationLock): acquire, renew, release on stop, takeover", w.all())
		})
	}
}

// A client-go candidate with a skewed clock writes times shifted by the skew, on every kind
// of lock, and still leads and renews normally.
func TestClientGoSkew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind election.LockKind
		skew time.Duration
	}{
		{election.LockLease, 90 * time.Second},
		{election.LockLease, -45 * time.Second},
		{election.LockConfigMap, 300 * time.Second},
	} {
		t.Run(string(tc.kind)+tc.skew.String(), func(t *testing.T) {
			t.Parallel()
			ns := namespace(t, "skew-"+strings.ToLower(string(tc.kind))+map[bool]string{true: "-behind", false: "-ahead"}[tc.skew < 0])
			w := watchLock(t, tc.kind, ns, "lock")
			start := time.Now()
			c := startCandidate(t, election.Config{Namespace: ns, Name: "lock", Identity: "skewed", Timings: election.Fast, Kind: tc.kind, Skew: tc.skew})
			w.waitFor(time.Minute, "four renewals", func(record) bool { return len(w.skews(start)) >= 4 })
			if !c.Leading() {
				t.Errorf("the skewed candidate does not lead")
			}
			checkSkew(t, w, w.skews(start), tc.skew)
		})
	}
}

// A leader stalled in the middle of a renewal past its renew deadline (a GC pause or a frozen
// VM caught mid-request) steps down when it resumes, and with ReleaseOnCancel its release
// empties the Lease its successor took meanwhile: client-go v0.36's release() reads the Lease
// but judges leadership by its own stale record; the successor then takes it again.
// docs/alerts.md rests on this (the robbed successor's double leadership), and so does the
// history's cleared_by_predecessor ending; the test fails when client-go changes it.
func TestClientGoStalledLeaderReleasesItsSuccessorsLease(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "cgo-stall")
	w := watchLock(t, election.LockLease, ns, "lock")
	stalled, err := election.StartStalledLeader(context.Background(), env.client, ns, "lock", "stalled", election.Fast)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stalled.Stop)

	w.waitFor(time.Minute, "the first leader holds", func(r record) bool { return r.holder == "stalled" })
	if err := stalled.Stall(time.Minute); err != nil {
		t.Fatal(err)
	}
	startCandidate(t, election.Config{Namespace: ns, Name: "lock", Identity: "successor", Timings: election.Fast, Release: true})
	took := w.waitFor(time.Minute, "the successor holds", func(r record) bool { return r.holder == "successor" })
	if err := stalled.Resume(time.Minute); err != nil {
		t.Fatal(err)
	}
	// Only the stalled leader releases: the successor runs on, and takes its Lease again at
	// its next renewal (which conflicts, reads the empty Lease and acquires it anew).
	emptied := w.waitFor(time.Minute, "the successor's Lease emptied", func(r record) bool { return r.holder == "" && r.seen.After(took.seen) })
	w.waitFor(time.Minute, "the successor takes it again", func(r record) bool { return r.holder == "successor" && r.seen.After(emptied.seen) })
}
