package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
)

// handlerFor is the metrics path as run wires it, limited to maxRequests concurrent scrapes.
func handlerFor(view cache, maxRequests int) http.Handler {
	return handlersFor(view, maxRequests).metrics
}

func handlersFor(view cache, maxRequests int) handlers {
	reg := prometheus.NewRegistry()
	return newHandlers(&options{maxRequests: maxRequests}, reg, view, nil, slog.New(slog.DiscardHandler))
}

// The status pages count against the same --web.max-requests as scrapes: with the only slot
// held by a scrape, the JSON API answers 503; once it is free, 200.
func TestStatusPagesShareScrapeLimit(t *testing.T) {
	view := fake.NewOneLeaseView()
	h := handlersFor(view, 1)
	metrics, leases := httptest.NewServer(h.metrics), httptest.NewServer(newServer("/metrics", "", h, readyWhen(view.HasSynced), false).Handler)
	defer metrics.Close()
	defer leases.Close()
	first := make(chan int)
	go func() {
		resp, err := http.Get(metrics.URL)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-view.Entered
	for _, path := range []string{"/api/v1/leases", "/leases", "/leases/ns/ctrl"} {
		resp, err := http.Get(leases.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("GET %s while a scrape holds the only slot: %d, want 503", path, resp.StatusCode)
		}
	}
	close(view.Block)
	if code := <-first; code != http.StatusOK {
		t.Fatalf("first scrape: %d", code)
	}
	// The client has the whole scrape a moment before the handler returns and frees the
	// slot (the response is streamed): the slot is free within that moment, not before.
	code := 0
	for end := time.Now().Add(2 * time.Second); code != http.StatusOK && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		resp, err := http.Get(leases.URL + "/api/v1/leases/ns/ctrl")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		code = resp.StatusCode
	}
	if code != http.StatusOK {
		t.Fatalf("GET /api/v1/leases/ns/ctrl once the scrape ended: %d for 2 s, want 200", code)
	}
}

func TestConcurrentScrapeLimit(t *testing.T) {
	view := fake.NewOneLeaseView()
	srv := httptest.NewServer(handlerFor(view, 1))
	defer srv.Close()
	first := make(chan int)
	go func() {
		resp, err := http.Get(srv.URL)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	// Once the first scrape is inside the view it holds the only slot: a second must get 503.
	<-view.Entered
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "--web.max-requests") {
		t.Errorf("second concurrent scrape: %d %q, want 503 naming --web.max-requests", resp.StatusCode, body)
	}
	close(view.Block)
	if code := <-first; code != http.StatusOK {
		t.Fatalf("first scrape: %d", code)
	}
}
