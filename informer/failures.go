package informer

import (
	"errors"
	"net"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// failed counts a list or watch failure and logs only the first of a run of failures; the
// reflector retries with backoff and would otherwise log every few seconds for an hour.
// The one exception: a run that turns into forbidden or unauthorized (RBAC revoked while the
// API server restarted: first "connection", then "forbidden") logs that reason once too,
// because it needs an operator and "connection" would hide it.
func (h *health) failed(resource string, err error) {
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
	args := []any{"resource", resource, "reason", reason, "err", err}
	if reason == "forbidden" {
		args = append(args, "hint", "the exporter's identity needs the list and watch verbs on "+resource+"; "+
			"apply the ClusterRole and binding in deploy/ (or a Role per namespace with --namespaces); retrying")
	}
	h.logger.Error("cannot list or watch lock objects; metrics freeze at the last known state until this clears", args...)
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
