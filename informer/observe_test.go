package informer

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/lease-exporter/lease-exporter/lock"
)

// judgeClock is the exporter's clock in the judgement tests, with a Lease store whose watch
// the test opens and closes: events from a second after it opened are live.
type judgeClock struct {
	now   time.Time
	store *store[*lock.Lease]
}

func newJudge() *judgeClock {
	j := &judgeClock{now: t0}
	m := newMetrics(prometheus.NewRegistry())
	j.store = newStore(leaseSource{}.decode, observeLock, nil, func() time.Time { return j.now }, m)
	return j
}

func (j *judgeClock) at(d time.Duration) *judgeClock { j.now = t0.Add(d); return j }
func (j *judgeClock) openWatch()                     { j.store.liveFrom.Store(j.now.Add(replayGrace).UnixMicro()) }
func (j *judgeClock) closeWatch()                    { j.store.liveFrom.Store(0) }
func (j *judgeClock) lease(t *testing.T) *lock.Lease { t.Helper(); return cached(t, j.store, "ns/l") }
func (j *judgeClock) held(t *testing.T, at time.Duration) bool {
	t.Helper()
	return j.lease(t).Held(t0.Add(at).UnixMicro())
}

// skewed is a Lease renewed by a holder whose clock is off by skew, at exporter time at.
func skewed(rv, holder string, at, skew time.Duration) *coordinationv1.Lease {
	return rawLease("u1", rv, holder, t0.Add(at+skew))
}

// A holder whose clock runs 120 s behind, renewing every 2 s, is held the whole time once
// the exporter has seen it renew; its skew reads -120 s.
func TestJudgeHolderClockBehind(t *testing.T) {
	j := newJudge()
	j.openWatch()
	const skew = -120 * time.Second
	_ = j.at(2 * time.Second).store.Add(skewed("1", "a", 2*time.Second, skew)) // live creation
	for i := 2; i <= 30; i++ {
		at := time.Duration(2*i) * time.Second
		_ = j.at(at).store.Update(skewed(rvOf(i), "a", at, skew))
		for _, probe := range []time.Duration{at, at + time.Second, at + 2*time.Second} {
			if !j.held(t, probe) {
				t.Fatalf("held 0 at %v for a holder renewing every 2 s with its clock 120 s behind", probe)
			}
		}
	}
	if ms, ok := j.lease(t).ClockSkew(); !ok || ms != -120000 {
		t.Fatalf("skew %d ms (measured %v), want -120000", ms, ok)
	}
}

// A holder whose clock runs 300 s ahead dies: held goes to 0 one lease duration after the
// exporter last saw it renew, not 300 s later.
func TestJudgeHolderClockAheadDies(t *testing.T) {
	j := newJudge()
	j.openWatch()
	const skew = 300 * time.Second
	_ = j.at(2 * time.Second).store.Add(skewed("1", "a", 2*time.Second, skew))
	_ = j.at(4 * time.Second).store.Update(skewed("2", "a", 4*time.Second, skew)) // last renewal
	if !j.held(t, 19*time.Second) {
		t.Fatal("not held within the lease duration of its last renewal")
	}
	if j.held(t, 19*time.Second+time.Millisecond) {
		t.Fatal("still held after lease duration since the last renewal the exporter saw")
	}
	if ms, _ := j.lease(t).ClockSkew(); ms != 300000 {
		t.Fatalf("skew %d ms, want 300000", ms)
	}
}

// At start-up the exporter has seen no change: the initial list is judged by renewTime,
// capped at the moment it was listed. A Lease dead for hours is not held; a holder far ahead
// is held at most one duration after first sight; no skew is measured from a list.
func TestJudgeStartUp(t *testing.T) {
	for _, tc := range []struct {
		name      string
		renewedAt time.Duration // by the exporter's clock, listed at 10 s
		skew      time.Duration
		heldAt    map[time.Duration]bool
	}{
		{"healthy", 9 * time.Second, 0, map[time.Duration]bool{24 * time.Second: true, 24*time.Second + time.Millisecond: false}},
		{"dead for hours", -3 * time.Hour, 0, map[time.Duration]bool{10 * time.Second: false}},
		{"clock ahead, dead", -3 * time.Hour, 4 * time.Hour, map[time.Duration]bool{25 * time.Second: true, 25*time.Second + time.Millisecond: false}},
		{"clock behind beyond the duration: 0 until its next renewal", 9 * time.Second, -time.Minute, map[time.Duration]bool{10 * time.Second: false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJudge()
			_ = j.at(10*time.Second).store.Replace([]any{skewed("1", "a", tc.renewedAt, tc.skew)}, "1")
			for at, want := range tc.heldAt {
				if got := j.held(t, at); got != want {
					t.Errorf("held at %v = %v, want %v", at, got, want)
				}
			}
			if _, ok := j.lease(t).ClockSkew(); ok {
				t.Error("skew measured from a list")
			}
		})
	}
}

// The behind-clock holder of the start-up case is held again from its first renewal seen live.
func TestJudgeStartUpRecoversOnFirstLiveRenewal(t *testing.T) {
	j := newJudge()
	_ = j.at(10*time.Second).store.Replace([]any{skewed("1", "a", 9*time.Second, -time.Minute)}, "1")
	j.openWatch()
	_ = j.at(12 * time.Second).store.Update(skewed("2", "a", 11*time.Second, -time.Minute))
	if !j.held(t, 12*time.Second) || !j.held(t, 27*time.Second) || j.held(t, 27*time.Second+time.Millisecond) {
		t.Fatal("not judged from the first live renewal")
	}
}

// Events in the first second of a (re)opened watch are the API server's replay of what
// changed while it was closed: judged by renewTime corrected by the known skew, and never a
// skew sample.
func TestJudgeReplayAfterReconnect(t *testing.T) {
	j := newJudge()
	j.openWatch()
	const skew = 300 * time.Second
	_ = j.at(2 * time.Second).store.Update(skewed("1", "a", 2*time.Second, skew))
	_ = j.at(4 * time.Second).store.Update(skewed("2", "a", 4*time.Second, skew))
	j.closeWatch()
	// The holder renewed at 6 s and died; the watch reopens at 60 s and replays that renewal.
	j.at(60 * time.Second).openWatch()
	_ = j.at(60*time.Second + 100*time.Millisecond).store.Update(skewed("3", "a", 6*time.Second, skew))
	l := j.lease(t)
	if got := time.UnixMicro(l.ObservedRenewTime).Sub(t0); got != 6*time.Second {
		t.Fatalf("replayed renewal observed at %v, want 6s (its renewTime less the known skew)", got)
	}
	if ms, _ := l.ClockSkew(); ms != 300000 {
		t.Fatalf("replay changed the skew to %d ms", ms)
	}
	if j.held(t, 61*time.Second) {
		t.Fatal("a holder dead since 6 s is held after a replay at 60 s")
	}
}

// A relist after an outage returns a Lease changed meanwhile: judged like a replay; one that
// did not change keeps its record and its observed time.
func TestJudgeRelist(t *testing.T) {
	j := newJudge()
	j.openWatch()
	_ = j.at(2 * time.Second).store.Add(skewed("1", "a", 2*time.Second, -time.Minute))
	j.closeWatch()
	_ = j.at(40*time.Second).store.Replace([]any{skewed("1", "a", 2*time.Second, -time.Minute)}, "1")
	if got := time.UnixMicro(j.lease(t).ObservedRenewTime).Sub(t0); got != 2*time.Second {
		t.Fatalf("unchanged Lease: observed at %v after a relist, want 2s", got)
	}
	_ = j.at(50*time.Second).store.Replace([]any{skewed("2", "b", 45*time.Second, -time.Minute)}, "2")
	l := j.lease(t)
	if got := time.UnixMicro(l.ObservedRenewTime).Sub(t0); got != 45*time.Second {
		t.Fatalf("changed Lease: observed at %v after a relist, want 45s (renewTime less the known skew)", got)
	}
	if l.ObservedHolderChanges != 1 {
		t.Fatalf("holder changes %d after a relist showed a new holder, want 1", l.ObservedHolderChanges)
	}
	_ = j.at(55*time.Second).store.Replace([]any{skewed("2", "b", 45*time.Second, -time.Minute)}, "3")
	if j.lease(t).ObservedHolderChanges != 1 {
		t.Fatal("a relist of an unchanged holder invented a change")
	}
}

// A relisted change is never placed before the last observation (it happened after it).
func TestJudgeRelistNeverGoesBack(t *testing.T) {
	j := newJudge()
	j.openWatch()
	_ = j.at(10 * time.Second).store.Add(skewed("1", "a", 10*time.Second, 0))
	j.closeWatch()
	// The holder's clock jumped back by a minute (NTP step) and it renewed during the outage.
	_ = j.at(30*time.Second).store.Replace([]any{skewed("2", "a", 20*time.Second, -time.Minute)}, "2")
	if got := time.UnixMicro(j.lease(t).ObservedRenewTime).Sub(t0); got != 10*time.Second {
		t.Fatalf("observed at %v, want 10s: not before the previous observation", got)
	}
}

// Recreation (new UID) is a first sight: counters and skew start afresh.
func TestJudgeRecreation(t *testing.T) {
	j := newJudge()
	j.openWatch()
	_ = j.at(2 * time.Second).store.Add(skewed("1", "a", 2*time.Second, time.Minute))
	_ = j.at(4 * time.Second).store.Update(skewed("2", "b", 4*time.Second, time.Minute))
	raw := skewed("3", "c", 6*time.Second, 0)
	raw.UID = "u2"
	_ = j.at(6 * time.Second).store.Update(raw)
	l := j.lease(t)
	if l.ObservedHolderChanges != 0 || l.FirstSeen != t0.Add(6*time.Second).UnixMicro() {
		t.Fatalf("recreated Lease carried the old counters: changes %d first seen %v", l.ObservedHolderChanges, l.FirstSeen)
	}
	if ms, ok := l.ClockSkew(); !ok || ms != 0 {
		t.Fatalf("recreated Lease skew %d (%v), want 0 measured from its live creation", ms, ok)
	}
}

// A released Lease (holder "") is not held, whatever its times; the release is not a change
// of leadership, the next holder is.
func TestJudgeRelease(t *testing.T) {
	j := newJudge()
	j.openWatch()
	_ = j.at(2 * time.Second).store.Add(skewed("1", "a", 2*time.Second, 0))
	_ = j.at(3 * time.Second).store.Update(skewed("2", "", 3*time.Second, 0))
	if j.held(t, 3*time.Second) || j.lease(t).ObservedHolderChanges != 0 {
		t.Fatalf("released: held %v, changes %d", j.held(t, 3*time.Second), j.lease(t).ObservedHolderChanges)
	}
	_ = j.at(5 * time.Second).store.Update(skewed("3", "b", 5*time.Second, 0))
	if !j.held(t, 5*time.Second) || j.lease(t).ObservedHolderChanges != 1 {
		t.Fatalf("reacquired: held %v, changes %d", j.held(t, 5*time.Second), j.lease(t).ObservedHolderChanges)
	}
}

// The electors' own counter covers changes the exporter missed: its rise counts when larger.
func TestJudgeTransitionsCounter(t *testing.T) {
	j := newJudge()
	j.openWatch()
	withTransitions := func(rv, holder string, at time.Duration, n int32) *coordinationv1.Lease {
		l := skewed(rv, holder, at, 0)
		l.Spec.LeaseTransitions = &n
		return l
	}
	_ = j.at(2 * time.Second).store.Add(withTransitions("1", "a", 2*time.Second, 7))
	_ = j.at(4 * time.Second).store.Update(withTransitions("2", "b", 4*time.Second, 8))  // both signals: 1
	_ = j.at(6 * time.Second).store.Update(withTransitions("3", "b", 6*time.Second, 11)) // missed three
	_ = j.at(8 * time.Second).store.Update(withTransitions("4", "b", 8*time.Second, 3))  // counter reset by hand: no change
	if got := j.lease(t).ObservedHolderChanges; got != 4 {
		t.Fatalf("holder changes %d, want 4", got)
	}
}

// Without renewTime or duration a Lease is never held, as for the API server's lease GC.
func TestJudgeMissingFields(t *testing.T) {
	j := newJudge()
	j.openWatch()
	raw := skewed("1", "a", 2*time.Second, 0)
	raw.Spec.RenewTime = nil
	_ = j.at(2 * time.Second).store.Add(raw)
	if j.held(t, 2*time.Second) {
		t.Fatal("held without renewTime")
	}
	if _, ok := j.lease(t).ClockSkew(); ok {
		t.Fatal("skew without renewTime")
	}
	raw = skewed("2", "a", 3*time.Second, 0)
	raw.Spec.LeaseDurationSeconds = nil
	_ = j.at(3 * time.Second).store.Update(raw)
	if j.held(t, 3*time.Second) {
		t.Fatal("held without leaseDurationSeconds")
	}
}

func rvOf(i int) string { return strconv.Itoa(i) }
