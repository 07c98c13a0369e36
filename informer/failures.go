package informer

import (
	"errors"
	"net"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

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
	case apierrors.IsTooManyRequests(err):
		// API Priority and Fairness rejected the request (or a max-in-flight limit did): the
		// fix is the cluster's flow control for the exporter's identity, not the network.
		return "throttled"
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.As(err, &netErr):
		return "connection"
	default:
		return "other"
	}
}
