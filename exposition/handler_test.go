package exposition

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lease-exporter/lease-exporter/collector"
	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
)

func handlerFor(view informer.View) *Handler {
	self := prometheus.NewRegistry()
	self.MustRegister(collector.NewStatus(view, collector.Settings{}))
	return NewHandler(self, collector.NewTextWriter(view, collector.Settings{}), collector.New(view, collector.Settings{}), slog.New(slog.DiscardHandler))
}

func TestMetricsFormats(t *testing.T) {
	view := fake.NewOneLeaseView()
	close(view.Block)
	srv := httptest.NewServer(handlerFor(view))
	defer srv.Close()
	for _, tc := range []struct {
		name, accept, encoding, wantType string
	}{
		{"text", "text/plain;version=0.0.4", "", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"},
		{"text gzip", "", "gzip", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"},
		{"protobuf preferred, text accepted: fast text", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", "", "text/plain; version=0.0.4"},
		{"protobuf only via client_golang", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "", "application/vnd.google.protobuf"},
		{"prometheus 2.42, openmetrics preferred: fast text", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", "gzip", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"},
		{"openmetrics only: text via client_golang", "application/openmetrics-text;version=1.0.0", "", "text/plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.Header.Set("Accept", tc.accept)
			req.Header.Set("Accept-Encoding", tc.encoding) // non-empty disables Go's transparent gzip
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body := io.Reader(resp.Body)
			if tc.encoding == "gzip" {
				if resp.Header.Get("Content-Encoding") != "gzip" {
					t.Fatal("gzip requested but not served")
				}
				if body, err = gzip.NewReader(resp.Body); err != nil {
					t.Fatal(err)
				}
			}
			b, _ := io.ReadAll(body)
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.wantType) {
				t.Errorf("Content-Type %q, want prefix %q", ct, tc.wantType)
			}
			if !strings.Contains(string(b), "lease_held") || !strings.Contains(string(b), "lease_exporter_cache_synced") {
				t.Errorf("response lacks lease or self series:\n%.500s", b)
			}
		})
	}
}

// TestSimultaneousGzipScrapesShareOneRender holds one gzip scrape inside the render while a
// second arrives: the second must wait for it and get the same bytes, rendering nothing.
func TestSimultaneousGzipScrapesShareOneRender(t *testing.T) {
	view := fake.NewOneLeaseView()
	h := handlerFor(view)
	srv := httptest.NewServer(h)
	defer srv.Close()
	unblock := sync.OnceFunc(func() { close(view.Block) })
	defer unblock() // before srv.Close, which waits for the blocked scrapes
	scrape := func() (string, error) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(zr)
		return string(b), err
	}
	bodies := make(chan string, 2)
	go func() { b, _ := scrape(); bodies <- b }()
	<-view.Entered // the first scrape is rendering
	go func() { b, _ := scrape(); bodies <- b }()
	deadline := time.Now().Add(10 * time.Second)
	for h.shared.joined.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("second scrape never joined the running render")
		}
		time.Sleep(time.Millisecond)
	}
	unblock()
	a, b := <-bodies, <-bodies
	if a == "" || a != b || !strings.Contains(a, "lease_held") {
		t.Fatalf("scrapes got different or empty bodies:\n%.300s\n---\n%.300s", a, b)
	}
	readsForTwo := len(view.Entered) + 1 // the first read was taken above
	// A scrape alone, after the shared render finished, renders afresh.
	if _, err := scrape(); err != nil {
		t.Fatal(err)
	}
	readsForOne := len(view.Entered) + 1 - readsForTwo
	if readsForOne == 0 || readsForTwo != readsForOne {
		t.Fatalf("two simultaneous scrapes read the view %d times, one scrape alone %d: the second rendered again", readsForTwo, readsForOne)
	}
}

// TestWaiterOfAPanickedRenderGets500: a scrape waiting for another scrape's render must not
// get an empty gzip body when that render panics.
func TestWaiterOfAPanickedRenderGets500(t *testing.T) {
	var s sharedRenders
	entered, release := make(chan struct{}), make(chan struct{})
	go func() {
		defer func() { _ = recover() }() // net/http recovers the rendering scrape's panic
		_, _ = s.do(context.Background(), "text/plain", func(io.Writer) {
			close(entered)
			<-release
			panic("render failed")
		})
	}()
	<-entered
	got := make(chan error)
	go func() {
		_, err := s.do(context.Background(), "text/plain", func(io.Writer) { t.Error("the waiter rendered") })
		got <- err
	}()
	for s.joined.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-got; !errors.Is(err, errRenderFailed) {
		t.Fatalf("waiter of a panicked render got %v, want errRenderFailed", err)
	}
	if body, err := s.do(context.Background(), "text/plain", func(w io.Writer) { _, _ = w.Write([]byte("ok")) }); err != nil || len(body) == 0 {
		t.Fatalf("render after the failed one: %v", err)
	}
}
