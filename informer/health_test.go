package informer

import (
	"bytes"
	"context"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
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

// TestJudgedAtFreezesWhileTheViewIsStale: now while every watch is open and caught up, else
// the moment the view went stale.
func TestJudgedAtFreezesWhileTheViewIsStale(t *testing.T) {
	now := t0
	h := newHealth(slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()), func() time.Time { return now })
	a, b := h.scope(leaseSource{}.resource()), h.scope(leaseSource{}.resource())
	if got := h.JudgedAt(now); !got.Equal(t0) {
		t.Fatalf("before any watch: %v", got)
	}
	a.listed()
	b.listed()
	a.opened(false)
	now = now.Add(10 * time.Second)
	if got := h.JudgedAt(now); !got.Equal(t0) {
		t.Fatal("fresh with only one of two watches open")
	}
	b.opened(false)
	if got := h.JudgedAt(now); !got.Equal(now) {
		t.Fatalf("all watches open: got %v want now", got)
	}
	lost := now
	a.closed()
	now = now.Add(time.Minute)
	if got := h.JudgedAt(now); !got.Equal(lost) {
		t.Fatalf("after losing a watch: got %v want %v", got, lost)
	}
	a.opened(true) // a streaming list is current only after its initial events
	now = now.Add(5 * time.Second)
	if got := h.JudgedAt(now); !got.Equal(lost) {
		t.Fatal("streaming list counted as current before its initial-events bookmark")
	}
	a.caughtUp()
	if got := h.JudgedAt(now); !got.Equal(now) {
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
	if got := h.JudgedAt(now); !got.Equal(t0) {
		t.Fatalf("one of two streaming lists caught up: view current at %v, want frozen at %v", got, t0)
	}
	// The other one fails before its initial events are in, and retries with a plain list
	// and watch.
	b.closed()
	if h.inInitialStream() {
		t.Fatal("a streaming list that ended still counts as catching up")
	}
	b.listed()
	b.opened(false)
	if got := h.JudgedAt(now); !got.Equal(now) {
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
		{apierrors.NewTooManyRequests("slow down", 1), "throttled"},
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
	if got := h.JudgedAt(now.Add(time.Second)); !got.Equal(now) {
		t.Fatalf("initial list: %v", got)
	}
	s.opened(false)
	now = now.Add(time.Minute)
	lost := now
	s.closed()
	now = now.Add(time.Minute)
	s.listed()
	if got := h.JudgedAt(now); !got.Equal(lost) {
		t.Fatalf("relist during outage moved the view to %v, want frozen at %v", got, lost)
	}
}

// TestResumedWatchRefusedKeepsViewFrozen reproduces an API server restart that outlasts
// nearly a Lease's duration: the reflector resumes its watch from the resource version it had
// before the outage, without listing; the restarted API server's watch cache no longer has
// it, and ends the watch at once with 410 Gone. Nothing arrived since the outage began, so
// the view must stay frozen where it was lost: judged at the moment the refused watch ended,
// Leases renewed all along read as expired (lease_held 0 in TestAPIServerRestartedThreeTimes).
func TestResumedWatchRefusedKeepsViewFrozen(t *testing.T) {
	now := t0
	s := watchingHealth(&now)
	h := s.h
	now = now.Add(time.Minute)
	lost := now
	s.closed() // the API server goes away
	now = now.Add(58 * time.Second)
	s.opened(false) // resumed from the old resource version
	if got := h.JudgedAt(now); !got.Equal(lost) {
		t.Fatalf("resumed watch counted as current before anything arrived: view at %v, want frozen at %v", got, lost)
	}
	now = now.Add(time.Millisecond)
	s.closed() // 410 Gone: the reflector relists
	if got := h.JudgedAt(now.Add(time.Second)); !got.Equal(lost) {
		t.Fatalf("refused resumed watch moved the view to %v, want frozen at %v", got, lost)
	}
	s.listed()
	s.opened(false) // a watch from the relist's version is current at once
	if got := h.JudgedAt(now); !got.Equal(now) {
		t.Fatalf("watch after a relist: view at %v, want now", got)
	}
}

// TestResumedWatchAccepted: a resumed watch the API server accepts counts as current from its
// first event or bookmark (its replay of what was missed), or after replayGrace when nothing
// was missed and nothing arrives.
func TestResumedWatchAccepted(t *testing.T) {
	now := t0
	s := watchingHealth(&now)
	h := s.h
	now = now.Add(5 * time.Minute)
	s.closed() // the watch timed out, as every watch does after 5-10 minutes
	s.opened(false)
	now = now.Add(10 * time.Millisecond)
	s.delivered()
	if got := h.JudgedAt(now); !got.Equal(now) {
		t.Fatalf("resumed watch after its first event: view at %v, want now", got)
	}
	s.closed()
	lost := now
	s.opened(false)
	if got := h.JudgedAt(now.Add(replayGrace / 2)); !got.Equal(lost) {
		t.Fatalf("quiet resumed watch within replayGrace: view at %v, want %v", got, lost)
	}
	if at := now.Add(replayGrace); !h.JudgedAt(at).Equal(at) {
		t.Fatalf("quiet resumed watch after replayGrace: view at %v, want %v", h.JudgedAt(at), at)
	}
}

// TestScopeReportsFirstEventOfResumedWatch wires the above through a scope: its first watch
// event tells health the resumed watch was accepted; later events do not take health's lock.
func TestScopeReportsFirstEventOfResumedWatch(t *testing.T) {
	client := fake.NewClientset()
	m := newMetrics(prometheus.NewRegistry())
	h := newHealth(slog.New(slog.DiscardHandler), m, time.Now)
	s := newScopes(leaseSource{}, observeLock, Clients{List: client, Watch: client}, []string{""}, Options{}, time.Now, m, h)[0]
	sh := s.health.(*scopeHealth)
	if _, err := s.listFunc(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := s.watchFunc(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sh.state != watchCurrent {
		t.Fatalf("state %v for the watch after a list, want current", sh.state)
	}
	w.Stop()
	if w, err = s.watchFunc(context.Background(), metav1.ListOptions{ResourceVersion: "7"}); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if sh.state != watchResuming {
		t.Fatalf("state %v for a watch resumed without a list, want resuming", sh.state)
	}
	_ = s.Update(rawLease("u1", "8", "a", t0))
	if sh.state != watchCurrent || s.awaitingEvent.Load() {
		t.Fatalf("after the first event: state %v, awaiting %v; want current, not awaiting", sh.state, s.awaitingEvent.Load())
	}
}

// loggingHealth is the health of one Lease scope that logs to logs on a clock read from now.
func loggingHealth(logs *bytes.Buffer, now *time.Time) *scopeHealth {
	h := newHealth(slog.New(slog.NewTextHandler(logs, nil)), newMetrics(prometheus.NewRegistry()), func() time.Time { return *now })
	return h.scope(leaseSource{}.resource())
}

// watchingHealth returns a scope that has listed and opened its watch, current at *now.
func watchingHealth(now *time.Time) *scopeHealth {
	s := loggingHealth(new(bytes.Buffer), now)
	s.listed()
	s.opened(false)
	return s
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

// A scope added to a current view (candidates discovered after a throttled start) freezes
// the view at the moment it was added until its watch is in, not at an older loss.
func TestScopeAddedLaterFreezesTheViewWhereItWasAdded(t *testing.T) {
	now := t0
	h := newHealth(slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()), func() time.Time { return now })
	a := h.scope(leaseSource{}.resource())
	a.listed()
	a.opened(false)
	now = now.Add(time.Hour)
	added := now
	b := h.scope(candidateSource{}.resource())
	now = now.Add(time.Second)
	if got := h.JudgedAt(now); !got.Equal(added) {
		t.Fatalf("while the added scope lists: JudgedAt %v, want %v (when it was added)", got, added)
	}
	b.listed()
	b.opened(false)
	if got := h.JudgedAt(now); !got.Equal(now) {
		t.Fatalf("both open: JudgedAt %v, want now", got)
	}
}
