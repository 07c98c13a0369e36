package informer

import (
	"log/slog"
	"sync"
	"time"
)

// health tracks whether the exporter's view of the API server is current, over every scope
// of every source: the view is current only while every scope's watch is open and caught up.
// The collector evaluates scrape-time series (held, renew age) at FreshAsOf, so a broken watch
// freezes them at the last moment the view was known to be true instead of letting every
// Lease "expire".
//
// Each scope reports through its own scopeHealth, the only writer of that scope's state.
type health struct {
	logger  *slog.Logger
	metrics *metrics
	now     func() time.Time

	mu sync.Mutex
	// want, open and catchingUp count scopes: all of them, those whose watch is open, and
	// those whose streaming list (sendInitialEvents) has not sent all its initial events.
	want, open, catchingUp int
	lostAt                 time.Time // when the view stopped being current
	freshFrom              time.Time // zero until the open watches have caught up
	everOpened             bool      // some watch has opened since start
	failing                bool
	failingSince           time.Time
	failures               int
	// logged holds the reasons already logged in the current run of failures.
	logged map[string]bool
}

func newHealth(logger *slog.Logger, m *metrics, now func() time.Time) *health {
	return &health{logger: logger, metrics: m, now: now, lostAt: now()}
}

// watchState is where one scope's watch stands.
type watchState uint8

const (
	watchClosed     watchState = iota // none open: before the first, or after one ended
	watchCatchingUp                   // a streaming list is sending its initial events
	watchCurrent                      // open, and the cache has everything it sent
)

// reporter is how a scope tells health about its list and watch.
type reporter interface {
	// listed records a successful list.
	listed()
	// opened records a watch the API server accepted; streaming is a streaming list's.
	opened(streaming bool)
	// caughtUp records the end of a list; it ends a streaming list's initial events.
	caughtUp()
	// closed records a watch that ended, for whatever reason.
	closed()
	// failed records a failed list or watch.
	failed(err error)
}

// scopeHealth is one scope's part of health: the state of its watch, which only that scope
// writes (through reporter), and what it watches, for the log.
type scopeHealth struct {
	h        *health
	resource string     // e.g. "leases.coordination.k8s.io"
	state    watchState // guarded by h.mu
}

var _ reporter = (*scopeHealth)(nil)

// scope adds a scope watching resource; the view is current only once it is too.
func (h *health) scope(resource string) *scopeHealth {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.want++
	h.metrics.setWatchUp(false)
	return &scopeHealth{h: h, resource: resource}
}

// set moves the scope to state to and keeps health's counts. Callers hold h.mu.
func (s *scopeHealth) set(to watchState) {
	h := s.h
	if s.state != watchClosed {
		h.open--
	}
	if s.state == watchCatchingUp {
		h.catchingUp--
	}
	if to != watchClosed {
		h.open++
	}
	if to == watchCatchingUp {
		h.catchingUp++
	}
	s.state = to
	h.metrics.setWatchUp(h.open == h.want)
}

// opened implements reporter. A plain watch resumes from the cache's resource version: the
// API server replays what was missed at once, so the view is current from now on. (A settle
// delay here made every reconnect evaluate fresh renewals at an older moment: negative renew
// ages.) A streaming list is only current once its initial events are in; see caughtUp.
func (s *scopeHealth) opened(streaming bool) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	h.everOpened = true
	if streaming {
		s.set(watchCatchingUp)
	} else {
		s.set(watchCurrent)
	}
	h.markFreshIfCurrent()
	h.recovered()
}

// listed implements reporter. Before any watch has opened, the initial list is the freshest
// state there is. After an outage the view stays frozen at the moment it was lost until the
// watch is back: a relist alone would judge Leases whose holders have not yet reconnected as
// expired while the exporter still reports itself stale.
func (s *scopeHealth) listed() {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open < h.want && !h.everOpened {
		h.lostAt = h.now()
	}
}

// caughtUp implements reporter. After a streaming list the watch stays open and this is its
// end of initial events; a plain list comes before its watch opens, which then marks the view
// fresh, so it changes nothing.
func (s *scopeHealth) caughtUp() {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.state != watchCatchingUp {
		return
	}
	s.set(watchCurrent)
	h.markFreshIfCurrent()
}

// closed implements reporter. A streaming list that ends before its initial events are all
// in stops catching up with it.
func (s *scopeHealth) closed() {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.current(h.now()) {
		h.lostAt = h.now()
	}
	s.set(watchClosed)
	h.freshFrom = time.Time{}
}

// failed implements reporter.
func (s *scopeHealth) failed(err error) { s.h.failed(s.resource, err) }

// markFreshIfCurrent starts the fresh period once every watch is open and caught up.
// Callers hold h.mu.
func (h *health) markFreshIfCurrent() {
	if h.open == h.want && h.catchingUp == 0 {
		h.freshFrom = h.now()
	}
}

// current reports whether the view is current at now. Callers hold h.mu.
func (h *health) current(now time.Time) bool {
	return h.open == h.want && !h.freshFrom.IsZero() && !now.Before(h.freshFrom)
}

// inInitialStream reports whether some streaming list is still sending its initial events;
// batched watch reads pause meanwhile (see WatchConfig).
func (h *health) inInitialStream() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.catchingUp > 0
}

// FreshAsOf returns the latest time at which the cached view is known to be true: now while
// every watch is open and caught up, otherwise the moment the view went stale.
func (h *health) FreshAsOf(now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.current(now) {
		return now
	}
	return h.lostAt
}
