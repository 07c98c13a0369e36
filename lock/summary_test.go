package lock

import (
	"slices"
	"testing"
	"time"
)

// A Summary counts each lock once by standing, bins its renew age (never negative, even for
// a record seen after the moment judged) and marks the bins of overdue locks; a record
// without renewTime has no age and stands expired.
func TestSummaryCountsStandingsAndAges(t *testing.T) {
	at := t0.Add(time.Minute).UnixMicro()
	onTime := Project(rawLease("u1", "1", "a", t0.Add(time.Minute-2*time.Second)))
	lagging := Project(rawLease("u2", "1", "a", t0.Add(time.Minute-10*time.Second)))
	expired := Project(rawLease("u3", "1", "a", t0))
	released := Project(rawLease("u4", "1", "", t0.Add(time.Minute-3*time.Second)))
	never := Project(rawLease("u5", "1", "a", t0))
	never.HasRenewTime, never.ObservedRenewTime = false, 0
	future := Project(rawLease("u6", "1", "a", t0.Add(2*time.Minute)))

	var s Summary
	for _, l := range []*Lease{onTime, lagging, expired, released, never, future} {
		s.Add(l, at)
	}
	if want := [NumStandings]int{2, 1, 2, 1}; s.Standings != want {
		t.Errorf("standings %v, want %v (on time, lagging, expired, released)", s.Standings, want)
	}
	if s.Total() != 6 || s.OverdueTotal() != 4 || s.NeverRenewed != 1 {
		t.Errorf("total %d, overdue %d, never renewed %d; want 6, 4, 1", s.Total(), s.OverdueTotal(), s.NeverRenewed)
	}
	// ≤10s: on time (2 s), lagging (10 s), released (3 s), the future record (0 s); ≤1m: expired.
	if s.Ages[0] != 4 || s.Overdue[0] != 2 || s.Ages[4] != 1 || s.Overdue[4] != 1 {
		t.Errorf("ages %v, overdue %v; want 4 (2 overdue) in the first bucket, 1 (overdue) in ≤1m", s.Ages, s.Overdue)
	}
	if want := int64((2 + 10 + 60 + 3) * 1e6); s.AgeSum != want {
		t.Errorf("age sum %d µs, want %d", s.AgeSum, want)
	}
}

// PastExpiry is how long ago a lock's lease ran out, by the expiry Held judges with; none
// while held, for a released lock, or without a renewTime.
func TestPastExpiry(t *testing.T) {
	l := Project(rawLease("u", "1", "a", t0))
	for _, tc := range []struct {
		after time.Duration
		want  time.Duration
		ok    bool
	}{{15 * time.Second, 0, false}, {16 * time.Second, time.Second, true}, {time.Minute, 45 * time.Second, true}} {
		got, ok := l.PastExpiry(t0.Add(tc.after).UnixMicro())
		if ok != tc.ok || time.Duration(got)*time.Microsecond != tc.want {
			t.Errorf("PastExpiry %v after the renewal = %v, %v; want %v, %v", tc.after, got, ok, tc.want, tc.ok)
		}
	}
	l.Holder = ""
	if _, ok := l.PastExpiry(t0.Add(time.Minute).UnixMicro()); ok {
		t.Error("a released lock has a past expiry")
	}
}

// MoreOverdue ranks node heartbeats the most overdue first: never renewed, then the longest
// since its renewal, then by name.
func TestMoreOverdueRanksNeverRenewedThenOldestThenByName(t *testing.T) {
	at := t0.Add(time.Hour).UnixMicro()
	named := func(name string, renew time.Time) *Lease {
		raw := rawLease("u-"+name, "1", "kubelet", renew)
		raw.Name = name
		return Project(raw)
	}
	never := named("never", t0)
	never.HasRenewTime, never.ObservedRenewTime = false, 0
	old, b, a := named("old", t0), named("b", t0.Add(30*time.Minute)), named("a", t0.Add(30*time.Minute))
	got := []*Lease{a, b, old, never}
	slices.SortFunc(got, MoreOverdue(at))
	var names []string
	for _, l := range got {
		names = append(names, l.Name())
	}
	if want := []string{"never", "old", "a", "b"}; !slices.Equal(names, want) {
		t.Errorf("ranked %v, want %v", names, want)
	}
}
