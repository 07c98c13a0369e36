package lock

import (
	"testing"
	"time"
)

// Classify names each observation once: first sight, renewals, takes (with how the last
// tenure ended and, seen live, the time without a leader), releases, and nothing for a
// record seen again. The same holder back after its lease lapsed both renews and acquires; a
// take found in a relist ended the tenure before it Released if the record before named
// nobody, Expired if acquired after that record's lease ran out, else Unknown. (rawLease: 15 s
// leases.)
func TestClassifyNamesEachObservationOnce(t *testing.T) {
	o := newObservations(HistoryOptions{})
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	for _, s := range []struct {
		holder     string
		at         float64
		live       bool
		kind       TransitionKind
		ended      Ending
		leaderless time.Duration // -1: not measured
		renewed    bool
		why        string
	}{
		{"a", 0, true, TransitionFirstSight, Unknown, -1, false, "the first record"},
		{"a", 2, true, TransitionRenewal, Unknown, -1, true, "a renewal"},
		{"", 3, true, TransitionReleased, Released, -1, false, "a release"},
		{"b", 3.4, true, TransitionAcquired, Released, sec(0.4), false, "a handover, 0.4 s after the release"},
		{"c", 25, true, TransitionAcquired, Expired, sec(6.6), false, "b wrote last at 3.4 s, so it expired at 18.4 s"},
		{"d", 30, true, TransitionAcquired, TakenOver, 0, false, "c's lease was still valid"},
		{"d", 60, true, TransitionAcquired, Expired, sec(15), true, "d back after its own lapse: renewed and acquired"},
		{"", 70, false, TransitionReleased, Released, -1, false, "a release found in a relist"},
		{"e", 80, false, TransitionAcquired, Released, -1, false, "a take found in a relist, after a release"},
		{"f", 200, false, TransitionAcquired, Expired, -1, false, "a take found in a relist, acquired (at 200 s) after e's lease ran out (95 s)"},
		{"f", 202, true, TransitionRenewal, Unknown, -1, true, "f renews"},
		{"g", 210, false, TransitionAcquired, Unknown, -1, false, "a take found in a relist, within f's lease (to 217 s): how f's tenure ended is unknown"},
	} {
		o.at(sec(s.at))
		prev := o.last["ns/l"]
		rec := o.see(o.write(s.holder, sec(s.at), sec(s.at)), s.live)
		tr := Classify(prev, rec, o.now.UnixMicro(), s.live)
		leaderless := time.Duration(-1)
		if tr.LeaderlessKnown {
			leaderless = time.Duration(tr.Leaderless) * time.Microsecond
		}
		if tr.Kind != s.kind || tr.Ended != s.ended || leaderless != s.leaderless || tr.Renewed != s.renewed || tr.Live != s.live || tr.Prev != prev || tr.Rec != rec {
			t.Errorf("%q at %vs (%s): kind %d, ended %v, leaderless %v, renewed %v; want %d, %v, %v, %v",
				s.holder, s.at, s.why, tr.Kind, tr.Ended, leaderless, tr.Renewed, s.kind, s.ended, s.leaderless, s.renewed)
		}
		// The record itself again (a relist showing nothing new) is nothing.
		if again := Classify(rec, rec, o.now.UnixMicro(), false); again.Kind != TransitionNone || again.Renewed || again.LeaderlessKnown {
			t.Errorf("%q at %vs: the cached record seen again is %+v, want nothing", s.holder, s.at, again)
		}
	}
}
