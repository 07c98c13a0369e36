package informer

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// /readyz's judgement: not ready before the initial list (saying why, with the latest
// failure: a throttled list names the throttling), ready while current, still ready through
// a short gap (a watch ending as planned), and not ready once the view has been stale longer
// than ReadyStaleAfter, until the watch is current again.
func TestReadyFollowsSyncAndStaleness(t *testing.T) {
	now := t0
	h := newHealth(slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()), func() time.Time { return now })
	s := h.scope(leaseSource{}.resource())

	h.throttled(leaseSource{}.resource(), apierrors.NewTooManyRequests("the server has received too many requests", 1))
	err := h.readiness(now, false)
	if err == nil || !strings.Contains(err.Error(), "not cached yet") || !strings.Contains(err.Error(), "the latest throttled: ") {
		t.Fatalf("throttled before the initial list: %v, want not ready naming the throttling", err)
	}
	s.listed()
	s.opened(false)
	if err := h.readiness(now, true); err != nil {
		t.Fatalf("synced and current: %v", err)
	}

	s.closed()
	now = now.Add(ReadyStaleAfter)
	if err := h.readiness(now, true); err != nil {
		t.Fatalf("stale for %s (a planned watch end): %v, want still ready", ReadyStaleAfter, err)
	}
	now = now.Add(time.Second)
	err = h.readiness(now, true)
	if err == nil || !strings.Contains(err.Error(), "stale for 11s") {
		t.Fatalf("stale for 11 s: %v, want not ready saying for how long", err)
	}
	s.listed()
	s.opened(false)
	if err := h.readiness(now, true); err != nil {
		t.Fatalf("current again: %v", err)
	}
}

// Each namespace's watch keeps its own failure reason in /readyz until that one recovers:
// team-a's watch opening again must not hide why team-b's still fails.
func TestReadyKeepsEachNamespacesFailureUntilItRecovers(t *testing.T) {
	now := t0
	h := newHealth(slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()), func() time.Time { return now })
	resource := leaseSource{}.resource()
	a, b := h.scopeIn(resource, "team-a"), h.scopeIn(resource, "team-b")
	a.failed(fmt.Errorf("dial: %w", syscall.ECONNREFUSED))
	b.failed(apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "", errors.New("no Role in team-b")))
	err := h.readiness(now, false)
	for _, want := range []string{"in namespace team-a: the latest connection: ", "in namespace team-b: the latest forbidden: "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("both failing: %v, want it to contain %q", err, want)
		}
	}
	a.listed()
	a.opened(false)
	err = h.readiness(now, false)
	if err == nil || !strings.Contains(err.Error(), "in namespace team-b: the latest forbidden: ") || !strings.Contains(err.Error(), "no Role in team-b") {
		t.Fatalf("after team-a recovered: %v, want team-b's forbidden still named", err)
	}
	if strings.Contains(err.Error(), "team-a") {
		t.Errorf("after team-a recovered: %v still names team-a", err)
	}
	b.listed()
	b.opened(false)
	if err := h.readiness(now, true); err != nil {
		t.Fatalf("both recovered and synced: %v", err)
	}
}
