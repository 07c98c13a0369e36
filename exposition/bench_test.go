package exposition

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
)

// benchTime is the benchmarks' fixed clock: every Lease is held and renewed on time.
var benchTime = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// BenchmarkScrapeHTTP is a scrape as Prometheus waits for it: a real net/http server on
// loopback serving the metrics handler over the real informer's cache, a real client reading
// the whole body (decompressing it when gzip). It reports the time to the whole body (ns/op)
// and to the first byte of the body (ttfb-ms), for 10k and 100k leader-election locks and
// the 90/10 mix of a large cluster at 100k. The writer's own benchmark
// (collector.BenchmarkTextWriterElections) leaves out the handler, the socket and the
// client; docs/benchmarks.md gives both.
func BenchmarkScrapeHTTP(b *testing.B) {
	for _, tc := range []struct {
		name   string
		leases func(int, time.Time) []*coordinationv1.Lease
		n      int
	}{
		{"elections=10000", fake.ElectionLeases, 10_000},
		{"elections=100000", fake.ElectionLeases, 100_000},
		{"mix=100000", fake.MixLeases, 100_000},
	} {
		cache := fake.SyncedCache(b, func() time.Time { return benchTime }, tc.leases(tc.n, benchTime))
		srv := httptest.NewServer(handlerAt(cache, func() time.Time { return benchTime }))
		for _, encoding := range []string{"identity", "gzip"} {
			b.Run(tc.name+"/"+encoding, func(b *testing.B) {
				client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
				var ttfb time.Duration
				var size int64
				for b.Loop() {
					first, n, err := scrape(client, srv.URL, encoding)
					if err != nil {
						b.Fatal(err)
					}
					ttfb += first
					size = n
				}
				b.ReportMetric(float64(ttfb.Microseconds())/1e3/float64(b.N), "ttfb-ms")
				b.ReportMetric(float64(size)/1e6, "MB-body")
			})
		}
		srv.Close()
	}
}

// scrape GETs url as Prometheus would with encoding, reads the whole body, and returns the
// time to its first byte and its size uncompressed.
func scrape(client *http.Client, url, encoding string) (time.Duration, int64, error) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
	req.Header.Set("Accept-Encoding", encoding)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var first [1]byte
	if _, err := io.ReadFull(resp.Body, first[:]); err != nil {
		return 0, 0, fmt.Errorf("first byte: %w", err)
	}
	ttfb := time.Since(start)
	body := io.MultiReader(bytes.NewReader(first[:]), resp.Body)
	if encoding == "gzip" {
		if body, err = gzip.NewReader(body); err != nil {
			return 0, 0, err
		}
	}
	n, err := readAll(body)
	return ttfb, n, err
}

// readBuf is the client's read buffer: large reads, as Prometheus's scrape reads into a
// growing buffer, not io.Discard's 8 KB ones, which would time the client's system calls.
var readBuf = make([]byte, 1<<20)

// readAll reads r to its end and returns how many bytes it read.
func readAll(r io.Reader) (int64, error) {
	var n int64
	for {
		m, err := r.Read(readBuf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
