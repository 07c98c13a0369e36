package informer

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// health tracks whether the exporter's view of the API server is current. The collector
// evaluates scrape-time series (held, renew age) at FreshAsOf, so a broken watch freezes them
// at the last moment the view was known to be true instead of letting every Lease "expire".
type health struct {
	logger  *slog.Logger
	metrics *metrics
	want    int // watches that must be open: one per informer
	now     func() time.Time

	mu           sync.Mutex
	open         int
	lostAt       time.Time // when the view stopped being current
	freshFrom    time.Time // zero until the open watches have caught up
	everOpened   bool      // some watch has opened since start
	failing      bool
	failingSince time.Time
	failures     int
	// catchingUp counts open streaming lists (sendInitialEvents) whose initial events have
	// not all arrived: until then that scope's cache is behind, whatever the others say.
	catchingUp int
	// logged holds the reasons already logged in the current run of failures.
	logged map[string]bool
}

func newHealth(logger *slog.Logger, m *metrics, want int, now func() time.Time) *health {
	return &health{logger: logger, metrics: m, want: want, now: now, lostAt: now()}
}

// opened records a watch that the API server accepted. A streaming list (sendInitialEvents)
// is only current once its initial-events-end bookmark arrives; see caughtUp.
func (h *health) opened(streamingList bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open++
	h.everOpened = true
	if streamingList {
		h.catchingUp++
	}
	// A plain watch resumes from the cache's resource version: the API server replays what
	// was missed at once, so the view is current from now on. (A settle delay here made
	// every reconnect evaluate fresh renewals at an older moment: negative renew ages.)
	h.markFreshIfCurrent()
	h.recovered()
	h.metrics.watchUp.Set(boolFloat(h.open == h.want))
}

// listed records a successful list. Before any watch has opened, the initial list is the
// freshest state there is. After an outage the view stays frozen at the moment it was lost
// until the watch is back: a relist alone would judge Leases whose holders have not yet
// reconnected as expired while the exporter still reports itself stale.
func (h *health) listed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open < h.want && !h.everOpened {
		h.lostAt = h.now()
	}
}

// caughtUp records the end of a streaming list's initial events.
func (h *health) caughtUp() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.catchingUp = max(0, h.catchingUp-1)
	h.markFreshIfCurrent()
}

// markFreshIfCurrent starts the fresh period once every watch is open and caught up.
// Callers hold h.mu.
func (h *health) markFreshIfCurrent() {
	if h.open == h.want && h.catchingUp == 0 {
		h.freshFrom = h.now()
	}
}

// inInitialStream reports whether some streaming list is still sending its initial events;
// batched watch reads pause meanwhile (see WatchConfig).
func (h *health) inInitialStream() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.catchingUp > 0
}

// closed records a watch that ended, for whatever reason; catchingUp says it was a
// streaming list that ended before its initial events were all in.
func (h *health) closed(catchingUp bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if catchingUp {
		h.catchingUp = max(0, h.catchingUp-1)
	}
	if h.open == h.want && !h.freshFrom.IsZero() && !h.now().Before(h.freshFrom) {
		h.lostAt = h.now()
	}
	h.open--
	h.freshFrom = time.Time{}
	h.metrics.watchUp.Set(0)
}

// FreshAsOf returns the latest time at which the cached view is known to be true: now while
// every watch is open and caught up, otherwise the moment the view went stale.
func (h *health) FreshAsOf(now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open == h.want && !h.freshFrom.IsZero() && !now.Before(h.freshFrom) {
		return now
	}
	return h.lostAt
}

// failed counts a list or watch failure and logs only the first of a run of failures; the
// reflector retries with backoff and would otherwise log every few seconds for an hour.
// The one exception: a run that turns into forbidden or unauthorized (RBAC revoked while the
// API server restarted: first "connection", then "forbidden") logs that reason once too,
// because it needs an operator and "connection" would hide it.
func (h *health) failed(err error) {
	reason := errorReason(err)
	h.metrics.watchErrors.WithLabelValues(reason).Inc()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures++
	if h.failing && (h.logged[reason] || reason != "forbidden" && reason != "unauthorized") {
		return
	}
	if !h.failing {
		h.failing, h.failingSince, h.logged = true, h.now(), map[string]bool{}
	}
	h.logged[reason] = true
	args := []any{"reason", reason, "err", err}
	if reason == "forbidden" {
		args = append(args, "hint", "the exporter's identity needs the list and watch verbs on leases.coordination.k8s.io; "+
			"apply the ClusterRole and binding in deploy/ (or a Role per namespace with --namespaces); retrying")
	}
	h.logger.Error("cannot list or watch Leases; metrics freeze at the last known state until this clears", args...)
}

// recovered logs the end of a run of failures once. Callers hold h.mu.
func (h *health) recovered() {
	if !h.failing {
		return
	}
	h.logger.Info("list and watch of Leases recovered", "after", h.now().Sub(h.failingSince).Round(time.Millisecond), "failures", h.failures)
	h.failing, h.failures = false, 0
}

// errorReason maps an error to the bounded reason label of lease_exporter_watch_errors_total.
func errorReason(err error) string {
	var netErr net.Error
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden"
	case apierrors.IsUnauthorized(err):
		return "unauthorized"
	case apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		return "expired"
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), apierrors.IsTooManyRequests(err):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.As(err, &netErr):
		return "connection"
	default:
		return "other"
	}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
