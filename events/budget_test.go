package events

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	corev1 "k8s.io/api/core/v1"
)

// waitDropped waits until cause has counted n drops.
func waitDropped(t *testing.T, w *Writer, cause string, n float64) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); testutil.ToFloat64(w.dropped.WithLabelValues(cause)) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("lease_exporter_events_dropped_total{cause=%q} %v, want %v", cause, testutil.ToFloat64(w.dropped.WithLabelValues(cause)), n)
		}
	}
}

// RBAC granted in one namespace and not another (a RoleBinding per namespace) pauses the
// refused namespace only.
func TestForbiddenPausesOnlyItsNamespace(t *testing.T) {
	w, client, _, _ := startWriter(t, Options{})
	client.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() != "denied" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", nil)
	})
	denied := newFeed(t, "denied", "l", w)
	denied.see("a", 0, true)
	denied.see("b", 20*time.Second, true)
	waitDropped(t, w, droppedForbidden, 1)
	allowed := newFeed(t, "allowed", "l", w)
	allowed.see("a", 0, true)
	allowed.see("b", 20*time.Second, true)
	waitEvents(t, client, "allowed", 1)
	if w.budget.pausedUntil("denied").IsZero() || !w.budget.pausedUntil("allowed").IsZero() {
		t.Errorf("paused until %v in denied, %v in allowed; want denied only", w.budget.pausedUntil("denied"), w.budget.pausedUntil("allowed"))
	}
}

// One lock changing hands a hundred times spends its own 5 and no more; the shared bucket
// (25) keeps the rest for the others, whose Events are written.
func TestFlappingLockCannotStarveOthers(t *testing.T) {
	w, client, _, _ := startWriter(t, Options{})
	flapping := newFeed(t, "flap", "l", w)
	for i := range 100 {
		flapping.see(string(rune('a'+i%2)), time.Duration(i)*20*time.Second, true)
	}
	for i := range 10 {
		f := newFeed(t, "calm", fmt.Sprint("l", i), w)
		f.uid = fmt.Sprintf("0b7d2a8e-4c1f-4d2a-9e3b-%012d", i+10)
		f.see("a", 0, true)
		f.see("b", 20*time.Second, true)
	}
	waitEvents(t, client, "calm", 10)
	waitEvents(t, client, "flap", lockBurst)
	time.Sleep(200 * time.Millisecond)
	if n := len(listEvents(t, client, "flap")); n != lockBurst {
		t.Errorf("the flapping lock wrote %d Events, want its budget's %d", n, lockBurst)
	}
	if got := testutil.ToFloat64(w.dropped.WithLabelValues(droppedLockBudget)); got != 100-1-lockBurst {
		t.Errorf("lease_exporter_events_dropped_total{cause=lock_budget} %v, want %d", got, 100-1-lockBurst)
	}
	if got := testutil.ToFloat64(w.dropped.WithLabelValues(droppedRateLimited)); got != 0 {
		t.Errorf("lease_exporter_events_dropped_total{cause=rate_limited} %v, want 0", got)
	}
}

// A lock's budget refills one Event a minute, and what is full again, or a pause that is
// over, is forgotten: ten thousand locks that each wrote once leave nothing after 5 minutes.
func TestBudgetRefillsAndForgetsIdleLocks(t *testing.T) {
	b := newBudget(1e6, 1e6)
	now := time.Unix(1e9, 0)
	ref := &corev1.ObjectReference{Kind: "Lease", Namespace: "ns", Name: "flap"}
	for range lockBurst {
		if c := b.take(ref, now); c != "" {
			t.Fatalf("a fresh lock dropped %q", c)
		}
	}
	if c := b.take(ref, now); c != droppedLockBudget {
		t.Errorf("the 6th Event at once: %q, want %q", c, droppedLockBudget)
	}
	if c := b.take(ref, now.Add(lockRefill)); c != "" {
		t.Errorf("a minute later: %q, want a token", c)
	}
	for i := range 10000 {
		b.take(&corev1.ObjectReference{Kind: "Lease", Namespace: "ns", Name: fmt.Sprint(i)}, now)
	}
	b.pause("denied", now.Add(forbiddenPause), droppedForbidden)
	b.forget(now.Add(lockRefill))
	if locks, nss := b.size(); locks != 1 || nss != 0 {
		t.Errorf("a minute on: %d locks and %d paused namespaces remembered, want the flapping lock only", locks, nss)
	}
	b.forget(now.Add(lockRefill * (lockBurst + 1)))
	if locks, _ := b.size(); locks != 0 {
		t.Errorf("after %v idle: %d locks remembered, want 0", lockRefill*lockBurst, locks)
	}
}
