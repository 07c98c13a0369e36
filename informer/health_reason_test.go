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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestPermissionFailureLoggedWithinRun reproduces RBAC revoked while the API server restarts:
// the run of failures starts as "connection" and continues as "forbidden". The forbidden
// reason must be logged (once) with its hint, or the operator only ever sees "connection".
func TestPermissionFailureLoggedWithinRun(t *testing.T) {
	var logs bytes.Buffer
	now := t0
	h := newHealth(slog.New(slog.NewTextHandler(&logs, nil)), newMetrics(prometheus.NewRegistry()), 1, func() time.Time { return now })
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
