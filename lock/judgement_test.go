package lock

import (
	"slices"
	"testing"
	"time"
)

func TestExpiry(t *testing.T) {
	l := Project(rawLease("u", "1", "a", t0))
	for _, tc := range []struct {
		at   time.Time
		held bool
	}{
		{t0, true}, {t0.Add(15 * time.Second), true}, {t0.Add(15*time.Second + time.Microsecond), false},
	} {
		if got := l.Held(tc.at.UnixMicro()); got != tc.held {
			t.Errorf("Held at %v = %v, want %v", tc.at.Sub(t0), got, tc.held)
		}
	}
	l.Holder = ""
	if l.Held(t0.UnixMicro()) {
		t.Error("a Lease without holder is held")
	}
}

// StandingAt puts a 15 s lock on time up to 7.5 s after the renewal seen, late after that
// until it expires at 15 s, expired after, and released without a holder, whenever renewed.
func TestStandingAt(t *testing.T) {
	l := Project(rawLease("u", "1", "a", t0))
	for _, tc := range []struct {
		after time.Duration
		want  Standing
	}{
		{0, StandingOnTime}, {7500 * time.Millisecond, StandingOnTime}, {7500*time.Millisecond + time.Microsecond, StandingLagging},
		{15 * time.Second, StandingLagging}, {15*time.Second + time.Microsecond, StandingExpired}, {time.Hour, StandingExpired},
	} {
		if got := l.StandingAt(t0.Add(tc.after).UnixMicro()); got != tc.want {
			t.Errorf("StandingAt %v after the renewal = %v, want %v", tc.after, got, tc.want)
		}
	}
	l.HasDuration = false
	if got := l.StandingAt(t0.UnixMicro()); got != StandingExpired {
		t.Errorf("a record without a duration stands %v, want expired (as Held judges it)", got)
	}
	l.Holder = ""
	if got := l.StandingAt(t0.UnixMicro()); got != StandingReleased {
		t.Errorf("a lock without a holder stands %v, want released", got)
	}
	for _, s := range Standings {
		if s.String() == "unknown" {
			t.Errorf("standing %d has no label value", s)
		}
	}
}

// skewTolerance is a quarter of the lease duration clamped to 2..30 s, the threshold of
// LeaseHolderClockSkew (judgement_rules_test.go runs the rule against it).
func TestSkewTolerance(t *testing.T) {
	for d, want := range map[int32]time.Duration{
		0: 2 * time.Second, 1: 2 * time.Second, 8: 2 * time.Second, 9: 2250 * time.Millisecond,
		15: 3750 * time.Millisecond, 40: 10 * time.Second, 120: 30 * time.Second, 3600: 30 * time.Second,
	} {
		if got := skewTolerance(d); got != want {
			t.Errorf("skewTolerance(%d) = %v, want %v", d, got, want)
		}
	}
}

// RenewTimeAhead names a renewTime in the reader's future only beyond the lock's skew
// tolerance (3.75 s for 15 s), and never one in its past or a record without renewTime.
func TestRenewTimeAheadFlagsOnlyBeyondTheTolerance(t *testing.T) {
	l := Project(rawLease("u", "1", "a", t0)) // renewTime t0, 15 s
	for _, tc := range []struct {
		readAt time.Duration // the reader's clock minus renewTime
		ahead  time.Duration
		beyond bool
	}{
		{time.Second, 0, false}, {0, 0, false}, {-3750 * time.Millisecond, 3750 * time.Millisecond, false},
		{-3751 * time.Millisecond, 3751 * time.Millisecond, true}, {-time.Hour, time.Hour, true},
	} {
		ahead, beyond := l.RenewTimeAhead(t0.Add(tc.readAt).UnixMicro())
		if ahead != tc.ahead || beyond != tc.beyond {
			t.Errorf("read %v after renewTime: ahead %v beyond %v, want %v %v", tc.readAt, ahead, beyond, tc.ahead, tc.beyond)
		}
	}
	l.HasRenewTime = false
	if _, beyond := l.RenewTimeAhead(t0.Add(-time.Hour).UnixMicro()); beyond {
		t.Error("a record without renewTime is flagged ahead")
	}
}

// Judge calls a held lock skewed only beyond its tolerance, either way, and never an
// unheld one: a dead holder's last skew says nothing now.
func TestJudge(t *testing.T) {
	at := t0.UnixMicro() // the lease was renewed (observed) at t0 and lasts 15 s
	for _, tc := range []struct {
		name     string
		holder   string
		at       int64
		skew     int32 // ms; noSkew: not measured
		want     Judgement
		problems []string
	}{
		{"held, skew not measured", "a", at, noSkew, Judgement{Held: true}, []string{}},
		{"held, skew at the tolerance", "a", at, 3750, Judgement{Held: true}, []string{}},
		{"held, skew past the tolerance", "a", at, 3751, Judgement{Held: true, Skewed: true}, []string{problemSkewed}},
		{"held, behind past the tolerance", "a", at, -3751, Judgement{Held: true, Skewed: true}, []string{problemSkewed}},
		{"expired, skewed", "a", at + 16e6, 60000, Judgement{}, []string{problemNotHeld}},
		{"released", "", at, 0, Judgement{}, []string{problemNotHeld}},
	} {
		l := Project(rawLease("u", "1", tc.holder, t0))
		l.ObservedRenewTime, l.skewMillis = t0.UnixMicro(), tc.skew
		j := Judge(l, tc.at)
		if j != tc.want || j.Healthy() != (len(tc.problems) == 0) || !slices.Equal(j.Problems(), tc.problems) || j.Problems() == nil {
			t.Errorf("%s: %+v healthy %v problems %q, want %+v problems %q", tc.name, j, j.Healthy(), j.Problems(), tc.want, tc.problems)
		}
	}
}

// Judge runs per lock per scrape at 100k locks.
func TestJudgeDoesNotAllocate(t *testing.T) {
	l := Project(rawLease("u", "1", "a", t0))
	l.ObservedRenewTime, l.skewMillis = t0.UnixMicro(), 5000
	if n := testing.AllocsPerRun(100, func() { _ = Judge(l, t0.UnixMicro()) }); n != 0 {
		t.Errorf("Judge allocates %v times", n)
	}
}
