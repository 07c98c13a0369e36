package main

import (
	"net/http"
	"testing"
	"time"
)

// A laptop ten minutes slow still judges by the API server's clock: one dated response puts
// the server's now within its second, and a second response dated across a second boundary
// narrows the estimate to the time between the two.
func TestServerClockFollowsTheDateHeaderNotTheLocalClock(t *testing.T) {
	server := time.Date(2026, 11, 28, 3, 0, 0, 400e6, time.UTC) // the API server's clock
	offset := 10 * time.Minute                                  // the laptop is this much slow
	local := server.Add(-offset)
	c := newServerClock(func() time.Time { return local })
	if _, _, fromServer := c.now(); fromServer {
		t.Fatal("judged by the API server's clock before any response")
	}
	// A request sent at local, answered 100 ms later, dated 03:00:00 (its second).
	c.observe(server.Format(http.TimeFormat), local, local.Add(100*time.Millisecond))
	local = local.Add(100 * time.Millisecond)
	at, unc, fromServer := c.now()
	truth := server.Add(100 * time.Millisecond)
	if !fromServer || unc > 550*time.Millisecond || at.Sub(truth).Abs() > unc {
		t.Fatalf("after one response: %v ± %v, truth %v", at, unc, truth)
	}
	// 500 ms later the server's clock passed 03:00:00.999: a response dated 03:00:01.
	local = local.Add(500 * time.Millisecond)
	truth = truth.Add(500 * time.Millisecond)
	c.observe(truth.Truncate(time.Second).Format(http.TimeFormat), local, local.Add(10*time.Millisecond))
	local = local.Add(10 * time.Millisecond)
	truth = truth.Add(10 * time.Millisecond)
	at, unc2, _ := c.now()
	if unc2 >= unc || at.Sub(truth).Abs() > unc2 {
		t.Errorf("after a second response across a second boundary: %v ± %v (was ± %v), truth %v", at, unc2, unc, truth)
	}
	// A response without a Date header changes nothing.
	c.observe("", local, local)
	if _, unc3, _ := c.now(); unc3 != unc2 {
		t.Errorf("an undated response moved the estimate: ± %v, was ± %v", unc3, unc2)
	}
}

// The Date header is the API server's text: whatever two responses carry, and however long
// they took, the clock never holds an interval upside down (a negative uncertainty), and its
// estimate stays within what the last dated response allows; an undated or unparsable one
// changes nothing.
func FuzzServerClockObserve(f *testing.F) {
	f.Add("Sat, 28 Nov 2026 03:00:00 GMT", "Sat, 28 Nov 2026 03:00:01 GMT", int64(0), int64(100e6), int64(600e6), int64(10e6))
	f.Add("Sat, 28 Nov 2026 03:00:00 GMT", "Sat, 28 Nov 2026 02:00:00 GMT", int64(0), int64(1e9), int64(2e9), int64(0))
	f.Add("", "Monday, 02-Jan-06 15:04:05 MST", int64(-5e9), int64(0), int64(0), int64(1))
	f.Fuzz(func(t *testing.T, date1, date2 string, sent1, rtt1, sent2, rtt2 int64) {
		local := time.Date(2026, 11, 28, 2, 50, 0, 0, time.UTC)
		at := func(ns int64) time.Time { return local.Add(time.Duration(ns % int64(time.Hour))) }
		abs := func(ns int64) time.Duration { return time.Duration(ns % int64(time.Minute)).Abs() }
		c := newServerClock(func() time.Time { return local })
		var last struct{ lo, hi time.Duration }
		dated := false
		for _, r := range []struct {
			date     string
			sent     time.Time
			received time.Time
		}{{date1, at(sent1), at(sent1).Add(abs(rtt1))}, {date2, at(sent2), at(sent2).Add(abs(rtt2))}} {
			_, _, before := c.now()
			beforeAt, beforeUnc, _ := c.now()
			c.observe(r.date, r.sent, r.received)
			d, err := http.ParseTime(r.date)
			if err != nil {
				if gotAt, gotUnc, got := c.now(); got != before || !gotAt.Equal(beforeAt) || gotUnc != beforeUnc {
					t.Fatalf("an unparsable Date %q moved the clock", r.date)
				}
				continue
			}
			dated = true
			last.lo, last.hi = d.Sub(r.received), d.Add(time.Second).Sub(r.sent)
		}
		at0, unc, fromServer := c.now()
		if fromServer != dated {
			t.Fatalf("judged by the API server's clock: %t, after dated responses: %t", fromServer, dated)
		}
		if !dated {
			return
		}
		if offset := at0.Sub(local); unc < 0 || offset < last.lo || offset > last.hi {
			t.Fatalf("offset %v ± %v, outside the last response's [%v, %v]", offset, unc, last.lo, last.hi)
		}
	})
}
