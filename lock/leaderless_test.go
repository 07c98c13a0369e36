package lock

import (
	"testing"
	"time"
)

// Leaderless measures, on live holder changes only, from the release seen, from the expiry
// judged, or nothing for a takeover of a valid lease; renewals and relists measure nothing.
// (rawLease: 15 s leases.)
func TestLeaderlessMeasuresEachLiveChange(t *testing.T) {
	o := newObservations(HistoryOptions{})
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	type step struct {
		holder   string
		at       float64
		live     bool
		want     time.Duration
		ended    Ending
		measured bool
		why      string
	}
	for _, s := range []step{
		{"a", 0, true, 0, 0, false, "first sight: nothing before it"},
		{"a", 2, true, 0, 0, false, "a renewal"},
		{"", 3, true, 0, 0, false, "a release: nobody takes it yet"},
		{"b", 3.4, true, at(0.4), Released, true, "a handover: 0.4 s after the release"},
		{"b", 5, true, 0, 0, false, "a renewal"},
		{"c", 25, true, at(5), Expired, true, "b stopped at 5 s: expired at 20 s, c took it at 25 s"},
		{"d", 30, true, 0, TakenOver, true, "c's lease was valid until 40 s"},
		{"d", 60, true, at(15), Expired, true, "d back after its own lapse: expired at 45 s"},
		{"e", 200, false, 0, 0, false, "a change found in a relist is not measured"},
	} {
		o.at(at(s.at))
		prev := o.last["ns/l"]
		rec := o.see(o.write(s.holder, at(s.at), at(s.at)), s.live)
		got, ended, ok := Leaderless(prev, rec, o.now.UnixMicro(), s.live)
		if ok != s.measured || ended != s.ended || time.Duration(got)*time.Microsecond != s.want {
			t.Errorf("%s at %vs (%s): got %v, %v, %v; want %v, %v, %v", s.holder, s.at, s.why, time.Duration(got)*time.Microsecond, ended, ok, s.want, s.ended, s.measured)
		}
	}
}

// A renewal is a write that moves renewTime forward under the same holder: a new holder, a
// release, a rewrite of the same renewTime are none; a relist after a gap counts the last
// write once, not the ones it missed.
func TestObservedRenewals(t *testing.T) {
	o := newObservations(HistoryOptions{})
	for _, s := range []struct {
		holder string
		at     time.Duration
		live   bool
		want   uint32
	}{
		{"a", 0, true, 0},
		{"a", 2 * time.Second, true, 1},
		{"a", 4 * time.Second, true, 2},
		{"a", 4 * time.Second, true, 2}, // the same renewTime again (another field changed)
		{"b", 6 * time.Second, true, 2}, // a new holder
		{"b", 8 * time.Second, true, 3},
		{"", 9 * time.Second, true, 3},    // a release
		{"c", 30 * time.Second, false, 3}, // found in a relist: a new holder
		{"c", 60 * time.Second, false, 4}, // a relist after a gap with many renewals: one
	} {
		rec := o.at(s.at).see(o.write(s.holder, s.at, 0), s.live)
		if rec.ObservedRenewals != s.want {
			t.Errorf("%q at %v: %d renewals, want %d", s.holder, s.at, rec.ObservedRenewals, s.want)
		}
	}
}

// A successor's tenure that a release ends within a lease duration, followed by the same
// successor taking the lock again within a lease duration, ends ClearedByPredecessor (a
// stalled client-go leader released a lock it no longer held; the successor never let go),
// and the history reports it once. A successor that held it longer or came back later, and
// the predecessor or another holder after the release, keep Released.
func TestClearedByPredecessor(t *testing.T) {
	var cleared []Class
	opts := memHistory
	opts.Cleared = func(c Class) { cleared = append(cleared, c) }
	o := newObservations(opts)
	o.live("a", 0, 0)
	o.live("b", 20*time.Second, 20*time.Second)        // a stalled: expired at 15 s
	o.live("", 22*time.Second, 22*time.Second)         // a, resumed, releases b's lock
	rec := o.live("b", 23*time.Second, 23*time.Second) // b's next renewal finds it empty
	tenures := rec.History().Snapshot().Tenures
	if len(tenures) != 3 || tenures[1].Holder != "b" || tenures[1].Ended != ClearedByPredecessor || len(cleared) != 1 {
		t.Fatalf("tenures %+v, reported %v; want b's first tenure ended cleared_by_predecessor, reported once", tenures, cleared)
	}

	for name, after := range map[string]func(o *observations) *Lease{
		"a successor that held it longer": func(o *observations) *Lease {
			o.live("b", 20*time.Second, 20*time.Second)
			o.live("", 40*time.Second, 40*time.Second)
			return o.live("b", 41*time.Second, 41*time.Second)
		},
		"the successor back long after the release": func(o *observations) *Lease {
			o.live("b", 20*time.Second, 20*time.Second)
			o.live("", 22*time.Second, 22*time.Second)
			return o.live("b", 60*time.Second, 60*time.Second)
		},
		"the predecessor after the release: a handover back": func(o *observations) *Lease {
			o.live("b", 20*time.Second, 20*time.Second)
			o.live("", 22*time.Second, 22*time.Second)
			return o.live("a", 23*time.Second, 23*time.Second)
		},
		"another holder after the release": func(o *observations) *Lease {
			o.live("b", 20*time.Second, 20*time.Second)
			o.live("", 22*time.Second, 22*time.Second)
			return o.live("c", 23*time.Second, 23*time.Second)
		},
	} {
		cleared = nil
		o := newObservations(opts)
		o.live("a", 0, 0)
		ts := after(o).History().Snapshot().Tenures
		if ts[1].Ended != Released || len(cleared) != 0 {
			t.Errorf("%s: b's tenure ended %v (reported %v), want released", name, ts[1].Ended, cleared)
		}
	}
}
