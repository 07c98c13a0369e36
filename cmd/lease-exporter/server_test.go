package main

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
)

type fakeView struct{ synced bool }

func (v fakeView) HasSynced() bool        { return v.synced }
func (fakeView) Range(func(*lock.Lease))  {}
func (fakeView) Scan(func([]*lock.Lease)) {}
func (v fakeView) Snapshot(nodes func(*lock.Lease) bool) informer.Snapshot {
	return fake.Snapshot(v, nodes)
}
func (fakeView) JudgedAt(now time.Time) time.Time             { return now }
func (fakeView) WatchingCandidates() bool                     { return false }
func (fakeView) RangeCandidates(func(*lock.Candidate))        {}
func (fakeView) RangeDeleted(func(*lock.Tombstone))           {}
func (fakeView) Lookup(lock.Kind, string, string) *lock.Lease { return nil }
func (fakeView) Has(lock.Kind, string, string) bool           { return false }

func testServer(t *testing.T, synced bool, mutate func(*options)) *httptest.Server {
	t.Helper()
	opts, err := parseOptions(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(opts)
	}
	reg := newRegistry()
	view := fakeView{synced: synced}
	srv := httptest.NewServer(newServer(opts.telemetryPath, opts.routePrefix(), newHandlers(opts, reg, view, nil, slog.New(slog.DiscardHandler)),
		readyWhen(view.HasSynced), opts.enablePprof).Handler)
	t.Cleanup(srv.Close)
	return srv
}

// readyWhen is /readyz's judgement for a view without health: ready once synced.
func readyWhen(synced func() bool) func() error {
	return func() error {
		if !synced() {
			return errors.New("the initial list of lock objects is not cached yet")
		}
		return nil
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestEndpoints(t *testing.T) {
	notReady := testServer(t, false, nil)
	if code, body := get(t, notReady.URL+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready: the initial list") {
		t.Errorf("/readyz before sync = %d %q, want 503 with the reason", code, body)
	}
	if code, _ := get(t, notReady.URL+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", code)
	}
	ready := testServer(t, true, nil)
	if code, _ := get(t, ready.URL+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after sync = %d, want 200", code)
	}
	code, body := get(t, ready.URL+"/metrics")
	for _, want := range []string{"lease_exporter_build_info{", "lease_exporter_cache_synced 1", "go_goroutines ", "process_cpu_seconds_total "} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	if code, body := get(t, ready.URL+"/"); code != http.StatusOK || !strings.Contains(body, `href="/metrics"`) {
		t.Errorf("landing page (%d) lacks a metrics link:\n%s", code, body)
	}
	if code, _ := get(t, ready.URL+"/debug/pprof/"); code == http.StatusOK {
		t.Error("pprof served although --web.enable-pprof is off")
	}
}

func TestTelemetryPathAndPprof(t *testing.T) {
	srv := testServer(t, true, func(o *options) { o.telemetryPath = "/custom"; o.enablePprof = true })
	if code, body := get(t, srv.URL+"/custom"); code != http.StatusOK || !strings.Contains(body, "lease_exporter_cache_synced") {
		t.Errorf("/custom = %d", code)
	}
	if code, _ := get(t, srv.URL+"/debug/pprof/"); code != http.StatusOK {
		t.Errorf("pprof = %d with --web.enable-pprof", code)
	}
}

// With --web.external-url's path, every route answers under it and at the root (a proxy may
// pass the prefix on or strip it), and the landing and status pages link under it.
func TestExternalURLPrefixesRoutesAndLinks(t *testing.T) {
	srv := testServer(t, true, func(o *options) { o.externalURL = "https://example.com/lx/" })
	for path, want := range map[string]string{
		"/lx/":        `href="/lx/leases"`,
		"/lx/leases":  `action="/lx/leases"`,
		"/leases":     `action="/lx/leases"`,
		"/lx/metrics": "lease_exporter_cache_synced 1",
		"/metrics":    "lease_exporter_cache_synced 1",
		"/lx/healthz": "ok",
		"/":           `href="/metrics"`,
	} {
		if code, body := get(t, srv.URL+path); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, want 200 with %s", path, code, want)
		}
	}
	if code, body := get(t, srv.URL+"/lx/leases"); code == http.StatusOK && strings.Contains(body, `href="/leases`) {
		t.Error("the status page under the prefix links to the root")
	}
}
