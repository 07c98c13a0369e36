package main

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// serverClock is the API server's clock, read from the Date header of every response, so a
// one-shot read judges a lock by the clock the API server stamps, not the laptop's, which may
// be minutes off. The header has one-second resolution: a response sent and received at local
// times send and receive, dated d, puts the offset (server minus local) between d − receive
// and d + 1 s − send. Every response narrows the interval; the estimate is its middle,
// uncertain by half its width.
type serverClock struct {
	local func() time.Time

	mu     sync.Mutex
	lo, hi time.Duration
	seen   bool
}

func newServerClock(local func() time.Time) *serverClock { return &serverClock{local: local} }

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// wrap returns rt reading the Date header of each response.
func (c *serverClock) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		sent := c.local()
		resp, err := rt.RoundTrip(req)
		if err == nil {
			c.observe(resp.Header.Get("Date"), sent, c.local())
		}
		return resp, err
	})
}

func (c *serverClock) observe(date string, sent, received time.Time) {
	d, err := http.ParseTime(date)
	if err != nil {
		return
	}
	lo, hi := d.Sub(received), d.Add(time.Second).Sub(sent)
	c.mu.Lock()
	defer c.mu.Unlock()
	// Intervals that do not meet mean the server's clock stepped: start over from this one.
	if c.seen && max(c.lo, lo) <= min(c.hi, hi) {
		lo, hi = max(c.lo, lo), min(c.hi, hi)
	}
	c.lo, c.hi, c.seen = lo, hi, true
}

// now returns the API server's time, its uncertainty, and whether any response was dated;
// without one, the local clock.
func (c *serverClock) now() (at time.Time, uncertainty time.Duration, fromServer bool) {
	c.mu.Lock()
	lo, hi, seen := c.lo, c.hi, c.seen
	c.mu.Unlock()
	if !seen {
		return c.local(), 0, false
	}
	// lo + half the width, not (lo + hi) / 2, which overflows for a Date centuries away.
	return c.local().Add(lo + (hi-lo)/2), (hi - lo) / 2, true
}

// describe says when and by which clock a one-shot read judged: "at T by the API server's
// clock (Date header, ±505ms)".
func (c *serverClock) describe() string {
	at, unc, server := c.now()
	if !server {
		return "at " + at.UTC().Format(time.RFC3339) + " by this machine's clock (the API server sent no Date header)"
	}
	return fmt.Sprintf("at %s by the API server's clock (Date header, ±%s)", at.UTC().Format(time.RFC3339), unc.Round(time.Millisecond))
}
