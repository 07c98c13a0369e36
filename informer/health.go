package informer

import (
	"log/slog"
	"sync"
	"time"
)

// health tracks whether the exporter's view of the API server is current, over every scope
// of every source: the view is current only while every scope's watch is open and caught up.
// The collector evaluates scrape-time series (held, renew age) at JudgedAt, so a broken watch
// freezes them at the last moment the view was known to be true instead of letting every
// Lease "expire".
//
// Each scope reports through its own scopeHealth, the only writer of that scope's state.
type health struct {
	logger  *slog.Logger
	metrics *metrics
	now     func() time.Time

	mu sync.Mutex
	// want, open, catchingUp and resuming count scopes: all of them, those whose watch is
	// open, those whose streaming list (sendInitialEvents) has not sent all its initial
	// events, and those whose resumed watch has not yet shown the API server accepted it.
	want, open, catchingUp, resuming int
	// resumeUntil is when the latest resumed watch counts as accepted without an event.
	resumeUntil time.Time
	lostAt      time.Time // when the view stopped being current
	freshFrom   time.Time // zero until the open watches have caught up
	everOpened  bool      // some watch has opened since start
	// failing is set while some scope has failed since its watch last opened; failingSince
	// and failures count the run of failures over every scope, for the log and /readyz.
	failing      bool
	failingSince time.Time
	failures     int
	scopes       []*scopeHealth // every scope, in the order added
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
	watchResuming                     // resumed without a list; not yet known to be accepted
	watchCurrent                      // open, and the cache has everything it sent
)

// reporter is how a scope tells health about its list and watch.
type reporter interface {
	// listed records a successful list.
	listed()
	// opened records a watch the API server accepted; streaming is a streaming list's.
	opened(streaming bool)
	// delivered records the first event or bookmark of an open watch.
	delivered()
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
	h         *health
	resource  string     // e.g. "leases.coordination.k8s.io"
	state     watchState // guarded by h.mu
	namespace string     // "" for all namespaces
	// listedLast is set by a list and cleared by the next watch: that watch starts where the
	// list ended, not at a resource version from before an outage. Guarded by h.mu.
	listedLast bool
	// failure is the reason and error of this scope's latest failure since its watch last
	// opened, "" if none: each scope keeps its own until it recovers, so one namespace's watch
	// opening does not hide why another's fails. Guarded by h.mu.
	failure string
}

var _ reporter = (*scopeHealth)(nil)

// scope adds a scope watching resource in every namespace; see scopeIn.
func (h *health) scope(resource string) *scopeHealth { return h.scopeIn(resource, "") }

// scopeIn adds a scope watching resource in namespace ("" for all); the view is current only
// once it is too.
func (h *health) scopeIn(resource, namespace string) *scopeHealth {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.current(h.now()) {
		// Added after start (a candidate discovery retried), the scope's first list and
		// watch are ahead: until they are in, the view is true as of now, not of when it was
		// last lost.
		h.lostAt = h.now()
	}
	h.want++
	h.metrics.setWatchUp(false)
	s := &scopeHealth{h: h, resource: resource, namespace: namespace}
	h.scopes = append(h.scopes, s)
	return s
}

// String names the scope for the log and /readyz.
func (s *scopeHealth) String() string {
	if s.namespace == "" {
		return s.resource
	}
	return s.resource + " in namespace " + s.namespace
}

// set moves the scope to state to and keeps health's counts. Callers hold h.mu.
func (s *scopeHealth) set(to watchState) {
	h := s.h
	if s.state != watchClosed {
		h.open--
	}
	switch s.state {
	case watchCatchingUp:
		h.catchingUp--
	case watchResuming:
		h.resuming--
	}
	if to != watchClosed {
		h.open++
	}
	switch to {
	case watchCatchingUp:
		h.catchingUp++
	case watchResuming:
		h.resuming++
	}
	s.state = to
	h.metrics.setWatchUp(h.open == h.want)
}

// opened implements reporter. A plain watch that starts where a list ended is current at
// once. A plain watch resumed from an older resource version (the reflector resumes after a
// dropped connection without listing) is current once it delivers its first event or
// bookmark, or after replayGrace without one: the API server replays what was missed at once,
// or, when the version is too old for it (its watch cache is new after a restart), ends the
// watch at once with 410 Gone, and the reflector relists. Until then the view stays frozen
// where it was lost: counting the doomed watch as current made the exporter judge every Lease
// at the moment it ended, with nothing received since the outage began, so Leases renewed all
// along read as expired after an outage close to their duration. (Evaluating every resumed
// watch at an older moment, even after its replay arrived, showed negative renew ages.)
// A streaming list is only current once its initial events are in; see caughtUp.
func (s *scopeHealth) opened(streaming bool) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	h.everOpened = true
	switch {
	case streaming:
		s.set(watchCatchingUp)
	case s.listedLast:
		s.set(watchCurrent)
	default:
		s.set(watchResuming)
		if until := h.now().Add(replayGrace); until.After(h.resumeUntil) {
			h.resumeUntil = until
		}
	}
	s.listedLast = false
	s.failure = ""
	h.markFreshIfCurrent()
	h.recovered()
}

// delivered implements reporter: the API server accepted the resumed watch.
func (s *scopeHealth) delivered() {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.state == watchResuming {
		s.set(watchCurrent)
	}
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
	s.listedLast = true
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
// in stops catching up with it; a resumed watch that ends before it counted as accepted
// leaves the view frozen where it was lost.
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
func (s *scopeHealth) failed(err error) {
	if reason := errorReason(err); reason != "throttled" { // see health.failed
		s.h.record([]*scopeHealth{s}, s.String(), reason, err)
	}
}

// markFreshIfCurrent starts the fresh period once every watch is open and caught up (a
// resumed watch still unaccepted delays it; see current). Callers hold h.mu.
func (h *health) markFreshIfCurrent() {
	if h.open == h.want && h.catchingUp == 0 {
		h.freshFrom = h.now()
	}
}

// current reports whether the view is current at now. Callers hold h.mu.
func (h *health) current(now time.Time) bool {
	return h.open == h.want && !h.freshFrom.IsZero() && !now.Before(h.freshFrom) &&
		(h.resuming == 0 || !now.Before(h.resumeUntil))
}

// inInitialStream reports whether some streaming list is still sending its initial events;
// batched watch reads pause meanwhile (see watchConfig).
func (h *health) inInitialStream() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.catchingUp > 0
}

// JudgedAt returns the latest time at which the cached view is known to be true: now while
// every watch is open and caught up, otherwise the moment the view went stale.
func (h *health) JudgedAt(now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.current(now) {
		return now
	}
	return h.lostAt
}

// failed counts a list or watch failure and logs only the first of a run of failures; the
// reflector retries with backoff and would otherwise log every few seconds for an hour.
// The one exception: a run that turns into forbidden or unauthorized (RBAC revoked while the
// API server restarted: first "connection", then "forbidden") logs that reason once too,
// because it needs an operator and "connection" would hide it.
// A 429 is not recorded here: each 429 answer was counted as it arrived (observeThrottling,
// on New's clients).
func (h *health) failed(resource string, err error) {
	reason := errorReason(err)
	if reason == "throttled" {
		return
	}
	h.record(nil, resource, reason, err)
}

// throttled records one 429 answer as it arrives (observeThrottling). The answer names only
// the resource, so it is the failure of every scope of that resource whose watch is not open.
func (h *health) throttled(resource string, err error) {
	h.mu.Lock()
	var scopes []*scopeHealth
	for _, s := range h.scopes {
		if s.resource == resource && s.state == watchClosed {
			scopes = append(scopes, s)
		}
	}
	h.mu.Unlock()
	h.record(scopes, resource, "throttled", err)
}

// record counts and logs a failure of reason, which is each of scopes' latest.
func (h *health) record(scopes []*scopeHealth, resource, reason string, err error) {
	h.metrics.watchErrors.WithLabelValues(reason).Inc()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures++
	for _, s := range scopes {
		s.failure = reason + ": " + err.Error()
	}
	if h.failing && (h.logged[reason] || reason != "forbidden" && reason != "unauthorized") {
		return
	}
	if !h.failing {
		h.failing, h.failingSince, h.logged = true, h.now(), map[string]bool{}
	}
	h.logged[reason] = true
	args := []any{"resource", resource, "reason", reason, "err", err}
	if reason == "forbidden" {
		args = append(args, "hint", "the exporter's identity needs the list and watch verbs on "+resource+"; "+
			"apply the ClusterRole and binding in deploy/ (or a Role per namespace with --namespaces); retrying")
	}
	if reason == "throttled" {
		// client-go waits as the API server asks and retries; a short burst clears by itself.
		h.logger.Warn("the API server is throttling the exporter's lists or watches (429); retrying as it asks, metrics freeze at the last known state while it lasts", args...)
		return
	}
	h.logger.Error("cannot list or watch lock objects; metrics freeze at the last known state until this clears", args...)
}

// recovered logs the end of a run of failures once, when no scope's failure is left.
// Callers hold h.mu.
func (h *health) recovered() {
	if !h.failing || len(h.failingScopes()) > 0 {
		return
	}
	h.logger.Info("list and watch of Leases recovered", "after", h.now().Sub(h.failingSince).Round(time.Millisecond), "failures", h.failures)
	h.failing, h.failures = false, 0
}

// failingScopes returns the scopes with a failure since their watch last opened. Callers
// hold h.mu.
func (h *health) failingScopes() []*scopeHealth {
	var failing []*scopeHealth
	for _, s := range h.scopes {
		if s.failure != "" {
			failing = append(failing, s)
		}
	}
	return failing
}
