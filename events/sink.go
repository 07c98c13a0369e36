package events

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
)

// forbiddenPause is how long the writer stops asking in a namespace after the API server
// refused it an Event there (403: RBAC, or an admission webhook or policy): neither changes by
// itself within seconds, and retrying every Event would be a request per change for nothing.
// Every 403 pauses only its namespace: an Event is created in its lock's namespace, and RBAC
// (a RoleBinding) and admission policies are granted or set per namespace, so one namespace's
// refusal says nothing about the others'. (A ResourceQuota never refuses one: Kubernetes
// exempts Events from quota in both API groups; TestEventsAreWrittenUnderAResourceQuotaOfNone.)
const forbiddenPause = time.Minute

// sink is the broadcaster's EventSink: the API's, with every answer counted, and a refusal
// for lack of permission logged once and pausing writes (no retry storm).
type sink struct {
	inner events.EventSink
	w     *Writer
}

func (s *sink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	out, err := s.inner.Create(ctx, ev)
	s.w.result(ev, err)
	return out, err
}

func (s *sink) Update(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	out, err := s.inner.Update(ctx, ev)
	s.w.result(ev, err)
	return out, err
}

func (s *sink) Patch(ctx context.Context, ev *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	out, err := s.inner.Patch(ctx, ev, data)
	if apierrors.IsNotFound(err) {
		return out, err // the broadcaster creates the Event instead; that answer counts
	}
	s.w.result(ev, err)
	return out, err
}

// result counts one answer of the API server to an Event write.
func (w *Writer) result(ev *eventsv1.Event, err error) {
	var status apierrors.APIStatus
	switch {
	case err == nil:
		w.written.WithLabelValues(ev.Reason).Inc()
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// Forbidden too, but no RBAC's doing: the lock's namespace is being deleted (and
		// with it the lock, whose LeaseDeleted cannot be written there).
		w.dropped.WithLabelValues(droppedRejected).Inc()
	case apierrors.IsForbidden(err):
		w.budget.pause(ev.Namespace, w.opts.now().Add(forbiddenPause), droppedForbidden) // before the count, which tests wait for
		w.dropped.WithLabelValues(droppedForbidden).Inc()
		if w.forbiddenLogged.CompareAndSwap(false, true) {
			w.logger.Error("Kubernetes Events forbidden: grant the exporter's ServiceAccount create and patch on events.events.k8s.io (the chart does with events.enabled=true); metrics, alerts and pages are unaffected, and writing in the refused namespace pauses a minute after each refusal",
				"namespace", ev.Namespace, "reason", ev.Reason, "err", err)
		}
	case errors.As(err, &status):
		w.dropped.WithLabelValues(droppedRejected).Inc()
		if w.rejectedLogged.CompareAndSwap(false, true) {
			w.logger.Warn("the API server rejected a Kubernetes Event; later rejections are only counted (lease_exporter_events_dropped_total{cause=\"rejected\"})",
				"namespace", ev.Namespace, "reason", ev.Reason, "err", err)
		}
	default:
		w.retries.Inc()
		if w.unreachableLogged.CompareAndSwap(false, true) {
			w.logger.Warn("cannot reach the API server to write a Kubernetes Event; client-go retries each up to 12 times, 10 s apart, and later failures are only counted (lease_exporter_events_write_retries_total)",
				"namespace", ev.Namespace, "reason", ev.Reason, "err", err)
		}
	}
}
