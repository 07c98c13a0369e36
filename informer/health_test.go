package informer

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestFailuresLoggedOncePerRun(t *testing.T) {
	var logs bytes.Buffer
	now := t0
	h := loggingHealth(&logs, &now)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "", errors.New("no RBAC"))
	for range 5 {
		h.failed(forbidden)
	}
	if n := strings.Count(logs.String(), "cannot list or watch"); n != 1 {
		t.Fatalf("failure logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "list and watch verbs on leases.coordination.k8s.io") {
		t.Errorf("forbidden log does not name the missing permission:\n%s", logs.String())
	}
	if got := testutil.ToFloat64(h.h.metrics.watchErrors.WithLabelValues("forbidden")); got != 5 {
		t.Errorf("forbidden errors counted %v, want 5", got)
	}
	h.opened(false)
	h.opened(false) // a second open without failures in between logs nothing
	if n := strings.Count(logs.String(), "recovered"); n != 1 {
		t.Fatalf("recovery logged %d times, want once:\n%s", n, logs.String())
	}
}

func TestFreshAsOf(t *testing.T) {
	now := t0
	h := newHealth(slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()), func() time.Time { return now })
	a, b := h.scope(leaseSource{}.resource()), h.scope(leaseSource{}.resource())
	if got := h.FreshAsOf(now); !got.Equal(t0) {
		t.Fatalf("before any watch: %v", got)
	}
	a.opened(false)
	now = now.Add(10 * time.Second)
	if got := h.FreshAsOf(now); !got.Equal(t0) {
		t.Fatal("fresh with only one of two watches open")
	}
	b.opened(false)
	if got := h.FreshAsOf(now); !got.Equal(now) {
		t.Fatalf("all watches open: got %v want now", got)
	}
	lost := now
	a.closed()
	now = now.Add(time.Minute)
	if got := h.FreshAsOf(now); !got.Equal(lost) {
		t.Fatalf("after losing a watch: got %v want %v", got, lost)
	}
	a.opened(true) // a streaming list is current only after its initial events
	now = now.Add(5 * time.Second)
	if got := h.FreshAsOf(now); !got.Equal(lost) {
		t.Fatal("streaming list counted as current before its initial-events bookmark")
	}
	a.caughtUp()
	if got := h.FreshAsOf(now); !got.Equal(now) {
		t.Fatal("not current after the initial-events bookmark")
	}
}

// TestStreamingListsCatchUpPerScope: with two watched namespaces both relisting by streaming,
// the first to catch up must not make the view current while the other still streams its
// initial events (its cache is behind; judging it now would show false expiries).
func TestStreamingListsCatchUpPerScope(t *testing.T) {
	now := t0
	h := newHealth(slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()), func() time.Time { return now })
	a, b := h.scope(leaseSource{}.resource()), h.scope(leaseSource{}.resource())
	a.opened(true)
	b.opened(true)
	if !h.inInitialStream() {
		t.Fatal("two streaming lists open, none caught up, but not in an initial stream")
	}
	now = now.Add(10 * time.Second)
	a.caughtUp()
	if got := h.FreshAsOf(now); !got.Equal(t0) {
		t.Fatalf("one of two streaming lists caught up: view current at %v, want frozen at %v", got, t0)
	}
	// The other one fails before its initial events are in, and retries with a plain watch.
	b.closed()
	if h.inInitialStream() {
		t.Fatal("a streaming list that ended still counts as catching up")
	}
	b.opened(false)
	if got := h.FreshAsOf(now); !got.Equal(now) {
		t.Fatalf("both watches open and caught up: got %v, want now", got)
	}
}

func TestErrorReason(t *testing.T) {
	gr := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{apierrors.NewForbidden(gr, "x", errors.New("no")), "forbidden"},
		{apierrors.NewUnauthorized("no"), "unauthorized"},
		{apierrors.NewResourceExpired("too old"), "expired"},
		{apierrors.NewTooManyRequests("slow down", 1), "timeout"},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), "connection"},
		{errors.New("boom"), "other"},
	} {
		if got := errorReason(tc.err); got != tc.want {
			t.Errorf("errorReason(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

// TestRelistAfterOutageStaysFrozen: a relist after an outage must not move the evaluation
// time while the watch is still down (holders may not have reconnected yet).
func TestRelistAfterOutageStaysFrozen(t *testing.T) {
	now := t0
	h := newHealth(slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()), func() time.Time { return now })
	s := h.scope(leaseSource{}.resource())
	s.listed() // the initial list is the freshest state before any watch
	if got := h.FreshAsOf(now.Add(time.Second)); !got.Equal(now) {
		t.Fatalf("initial list: %v", got)
	}
	s.opened(false)
	now = now.Add(time.Minute)
	lost := now
	s.closed()
	now = now.Add(time.Minute)
	s.listed()
	if got := h.FreshAsOf(now); !got.Equal(lost) {
		t.Fatalf("relist during outage moved the view to %v, want frozen at %v", got, lost)
	}
}

// loggingHealth is the health of one Lease scope that logs to logs on a clock read from now.
func loggingHealth(logs *bytes.Buffer, now *time.Time) *scopeHealth {
	h := newHealth(slog.New(slog.NewTextHandler(logs, nil)), newMetrics(prometheus.NewRegistry()), func() time.Time { return *now })
	return h.scope(leaseSource{}.resource())
}

// TestPermissionFailureLoggedWithinRun reproduces RBAC revoked while the API server restarts:
// the run of failures starts as "connection" and continues as "forbidden". The forbidden
// reason must be logged (once) with its hint, or the operator only ever sees "connection".
func TestPermissionFailureLoggedWithinRun(t *testing.T) {
	var logs bytes.Buffer
	now := t0
	h := loggingHealth(&logs, &now)
	refused := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "", errors.New("revoked"))
	for _, err := range []error{refused, refused, forbidden, refused, forbidden, forbidden} {
		h.failed(err)
	}
	out := logs.String()
	if n := strings.Count(out, "cannot list or watch"); n != 2 {
		t.Fatalf("logged %d failure lines, want 2 (connection, then forbidden once):\n%s", n, out)
	}
	if n := strings.Count(out, "list and watch verbs on leases.coordination.k8s.io"); n != 1 {
		t.Fatalf("forbidden hint logged %d times, want once:\n%s", n, out)
	}
	// After recovery a new run starts afresh.
	h.opened(false)
	logs.Reset()
	h.failed(refused)
	h.failed(refused)
	if n := strings.Count(logs.String(), "cannot list or watch"); n != 1 {
		t.Fatalf("new run logged %d failure lines, want 1:\n%s", n, logs.String())
	}
}
