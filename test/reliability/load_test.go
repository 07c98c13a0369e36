package reliability_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// clearLimitMessage reports whether a 503 body says why: too many concurrent scrapes, and the
// limit (--web.max-requests, default 10).
func clearLimitMessage(body string) bool {
	return strings.Contains(body, "concurrent") && strings.Contains(body, "10")
}

// result is one load request.
type result struct {
	end        time.Time
	status     int
	err        error
	goroutines float64 // from a 200's own go_goroutines, else -1
	heap       float64 // go_memstats_heap_inuse_bytes, else -1
}

// TestLoad runs 50 concurrent scrapers for 60 s against the -race build at 10k Leases.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("60 s load run")
	}
	const scrapers, duration = 50, 60 * time.Second
	ns := manyLeases(t)
	exp := env.StartReady(t, env.RaceBin, "--namespaces="+ns)
	waitFor(t, exp, "all Leases synced", func(s *exporterproc.Scrape) bool {
		return len(s.Series("lease_info", map[string]string{"namespace": ns})) == numLeases
	})

	client := &http.Client{
		// Generous: ten 10 MB scrapes share two busy cores under the race detector.
		Timeout:   2 * time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: scrapers, MaxConnsPerHost: scrapers},
	}
	var (
		mu      sync.Mutex
		results []result
		wg      sync.WaitGroup
	)
	start := time.Now()
	for range scrapers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < duration {
				r := loadRequest(client, exp.URL()+"/metrics")
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
				if r.status != http.StatusOK {
					time.Sleep(100 * time.Millisecond) // a client backing off, as Prometheus would until its next interval
				}
			}
		}()
	}
	wg.Wait()

	var ok, limited []result
	for _, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("request failed: %v", r.err)
		case r.status == http.StatusOK:
			ok = append(ok, r)
		case r.status == http.StatusServiceUnavailable:
			limited = append(limited, r)
		default:
			t.Errorf("unexpected status %d", r.status)
		}
	}
	t.Logf("%d requests in %.0fs: %d × 200, %d × 503", len(results), time.Since(start).Seconds(), len(ok), len(limited))
	if len(ok) < 4 || len(limited) == 0 {
		t.Fatalf("want several 200s and the in-flight limit to answer some 503s, got %d and %d", len(ok), len(limited))
	}
	if testing.Verbose() {
		var series []string
		for _, r := range ok {
			series = append(series, fmt.Sprintf("%.0fs:%v/%.0fMiB", r.end.Sub(start).Seconds(), r.goroutines, r.heap/(1<<20)))
		}
		t.Logf("time:goroutines/heap of each 200: %s", strings.Join(series, " "))
	}
	// Resources: the exporter's own gauges early in steady load against the end of the run.
	// The first wave of admitted scrapes (one per --web.max-requests slot) is skipped: those
	// read the gauges before any other scrape held buffers, so anything later would look like
	// growth. Then the next ten scrapes are compared with the last ten: about the first and
	// last 10 s of steady load, counted in scrapes because a busy machine stretches time.
	slices.SortFunc(ok, func(a, b result) int { return a.end.Compare(b.end) })
	const wave = 10
	k := min(10, (len(ok)-wave)/2)
	if k < 3 {
		t.Fatalf("only %d successful scrapes: too few to compare resources", len(ok))
	}
	first, last := ok[wave:wave+k], ok[len(ok)-k:]
	// Maxima, not single samples: both gauges swing with how many of the ten admitted scrapes
	// happen to be mid-flight, and a leak raises the peak of every later window.
	g0, g1 := maxOf(first, func(r result) float64 { return r.goroutines }), maxOf(last, func(r result) float64 { return r.goroutines })
	h0, h1 := maxOf(first, func(r result) float64 { return r.heap }), maxOf(last, func(r result) float64 { return r.heap })
	t.Logf("scrapes %d-%d vs the last %d: go_goroutines max %v -> %v; go_memstats_heap_inuse_bytes max %.0f MiB -> %.0f MiB",
		wave+1, wave+k, k, g0, g1, h0/(1<<20), h1/(1<<20))
	if g1 > g0+25 {
		t.Errorf("goroutines grew from %v to %v under steady load", g0, g1)
	}
	if h1 > 1.25*h0+16<<20 {
		t.Errorf("heap in use grew from %.0f MiB to %.0f MiB under steady load", h0/(1<<20), h1/(1<<20))
	}
	if err := exp.Stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(exp.Logs(), "DATA RACE") || exp.ExitCode() != 0 {
		t.Fatalf("race build exited %d after load; log:\n%s", exp.ExitCode(), testsuite.Tail(exp.Logs(), 80))
	}
}

// loadRequest scrapes once and, for a 200, keeps the exporter's own goroutine and heap gauges;
// a 503 must say why.
func loadRequest(client *http.Client, url string) result {
	resp, err := client.Get(url)
	if err != nil {
		return result{end: time.Now(), err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	r := result{end: time.Now(), status: resp.StatusCode, err: err, goroutines: -1, heap: -1}
	switch {
	case err != nil:
	case resp.StatusCode == http.StatusOK:
		r.goroutines, r.heap = sampleValue(body, "go_goroutines "), sampleValue(body, "go_memstats_heap_inuse_bytes ")
	case resp.StatusCode == http.StatusServiceUnavailable && !clearLimitMessage(string(body)):
		r.err = &unclear503{body: string(body)}
	}
	return r
}

type unclear503 struct{ body string }

func (e *unclear503) Error() string { return "503 without the in-flight limit message: " + e.body }

// sampleValue finds an unlabelled sample by its "name " prefix at a line start.
func sampleValue(body []byte, prefix string) float64 {
	s := string(body)
	i := strings.Index(s, "\n"+prefix)
	if i < 0 {
		return -1
	}
	line := s[i+1+len(prefix):]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(line), 64)
	if err != nil {
		return -1
	}
	return v
}

func maxOf(rs []result, f func(result) float64) float64 {
	m := -1.0
	for _, r := range rs {
		m = max(m, f(r))
	}
	return m
}
