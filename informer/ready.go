package informer

import (
	"fmt"
	"time"
)

// ReadyStaleAfter is how long the view may be stale with the exporter still ready. A watch
// that ends as planned (client-go asks for 5–10 minute timeouts) is current again within a
// second or two; a view stale for longer is an outage, a silent network or a refusal, and
// the Pod says so through its readiness. Prometheus scrapes not-ready endpoints too (its
// endpoints and endpointslice discovery keep them, labelled ready "false"), so a not-ready
// replica still reports its staleness, which is what pages.
const ReadyStaleAfter = 10 * time.Second

// Ready returns nil while the exporter counts as ready at now: its initial list of every
// watched scope is cached, and its view has not been stale for longer than ReadyStaleAfter.
// Otherwise the error says why, with the latest list or watch failure if any, for /readyz's
// body: a half-synced cache is never reported ready.
func (l *Cache) Ready(now time.Time) error {
	return l.health.readiness(now, l.HasSynced())
}

// readiness is Ready's judgement of the health's state.
func (h *health) readiness(now time.Time, synced bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	last := ""
	if failing := h.failingScopes(); h.failing && len(failing) > 0 {
		last = fmt.Sprintf("; %d list or watch failures since %s", h.failures, h.failingSince.UTC().Format(time.RFC3339))
		for _, s := range failing {
			if len(h.scopes) == 1 {
				last += ", the latest " + s.failure
			} else {
				last += fmt.Sprintf("; %s: the latest %s", s, s.failure)
			}
		}
	}
	switch {
	case !synced:
		return fmt.Errorf("the initial list of lock objects is not cached yet%s", last)
	case h.current(now):
		return nil
	case now.Sub(h.lostAt) <= ReadyStaleAfter:
		return nil
	}
	return fmt.Errorf("the view of the API server has been stale for %s, since %s (no watch open and current)%s",
		now.Sub(h.lostAt).Round(time.Second), h.lostAt.UTC().Format(time.RFC3339), last)
}
