package informer

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// TestNewFromConfig: New takes the client configuration once and builds both clients; the
// zero Options are valid, a Kind outside the table is not.
func TestNewFromConfig(t *testing.T) {
	cfg := &rest.Config{Host: "https://example:6443"}
	l, err := New(cfg, Options{WatchBatch: 5 * time.Second}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if l.clients.List == nil || l.clients.Watch == nil || l.clients.List == l.clients.Watch || l.host != cfg.Host {
		t.Fatalf("clients %+v, host %q: want a list and a separate watch client for %s", l.clients, l.host, cfg.Host)
	}
	if _, err := New(cfg, Options{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry()); err != nil {
		t.Fatalf("zero Options: %v", err)
	}
	// The one option New checks; the command validates the others (cmd's TestWatchFlagsValidate).
	if _, err := New(cfg, Options{Locks: []lock.Kind{lock.Kind(len(lock.Kinds))}}, nil, prometheus.NewRegistry()); err == nil {
		t.Fatal("a lock kind outside the table accepted")
	}
}

// TestWarningsLoggedOnce: deprecation warnings (v1 Endpoints; v1beta1 LeaseCandidate on 1.36)
// come with every list and watch; each distinct text is logged once, at info.
func TestWarningsLoggedOnce(t *testing.T) {
	var log syncbuffer.Buffer
	w := &onceWarnings{logger: slog.New(slog.NewTextHandler(&log, nil))}
	cfg := withWarnings(&rest.Config{Host: "https://example:6443"}, w)
	for range 3 {
		cfg.WarningHandlerWithContext.HandleWarningHeaderWithContext(context.Background(), 299, "-", "v1 Endpoints is deprecated")
	}
	w.HandleWarningHeaderWithContext(context.Background(), 299, "-", "something else")
	// The plain interface (clients built without context) shares the same memory.
	w.HandleWarningHeader(299, "-", "v1 Endpoints is deprecated")
	w.HandleWarningHeader(199, "-", "not a warning of the API server")
	if n := strings.Count(log.String(), "level=INFO"); n != 2 {
		t.Fatalf("%d lines logged at info, want 2 (one per distinct warning):\n%s", n, log.String())
	}
	if strings.Contains(log.String(), "not a warning of the API server") {
		t.Fatalf("a non-299 warning was logged:\n%s", log.String())
	}
	if n := strings.Count(log.String(), "deprecated"); n != 1 {
		t.Fatalf("the same warning logged %d times, want once:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "something else") {
		t.Fatalf("a different warning was not logged:\n%s", log.String())
	}
}
