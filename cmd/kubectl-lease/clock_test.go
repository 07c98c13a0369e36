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
