package collector

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
)

// countingDiscard counts what a scrape would send, so SetBytes reports the exposition's
// throughput without keeping 100 MB in memory.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkTextWriter is the render path production text scrapes take (TextWriter), at the
// sizes of the targets, with the default and the extended series, uncompressed and
// through gzip at BestSpeed as the metrics handler does. BenchmarkGatherText is the
// client_golang path the same series take for protobuf and OpenMetrics scrapes.
func BenchmarkTextWriter(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		view := fake.SyncedCache(b, func() time.Time { return scrapeTime }, fake.MixLeases(n, scrapeTime))
		for _, extended := range []bool{false, true} {
			for _, compress := range []bool{false, true} {
				name := fmt.Sprintf("leases=%d/extended=%t/gzip=%t", n, extended, compress)
				b.Run(name, func(b *testing.B) {
					benchWrite(b, NewTextWriter(view, Settings{Now: func() time.Time { return scrapeTime }, Extended: extended}), compress)
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/lease")
				})
			}
		}
	}
}

// BenchmarkTextWriterElections is issue 24's target: 100k leader-election locks, every family
// of the lean default for each (8 series per lock), walked in the order the informer's cache
// keeps, identity and gzip as Prometheus asks. It times the writer alone, to io.Discard;
// exposition.BenchmarkScrapeHTTP times the scrape as Prometheus waits for it.
func BenchmarkTextWriterElections(b *testing.B) {
	view := fake.SyncedCache(b, func() time.Time { return scrapeTime }, fake.ElectionLeases(100_000, scrapeTime))
	for _, compress := range []bool{false, true} {
		b.Run(fmt.Sprintf("leases=100000/gzip=%t", compress), func(b *testing.B) {
			benchWrite(b, NewTextWriter(view, Settings{Now: func() time.Time { return scrapeTime }}), compress)
		})
	}
}

// benchWrite times w's scrapes, through gzip at BestSpeed if compress (a fresh writer per
// scrape; the handler pools them), with the exposition's size as the bytes processed.
func benchWrite(b *testing.B, w *TextWriter, compress bool) {
	var size countingDiscard
	if err := w.Write(&size, nil); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size.n)
	b.ReportAllocs()
	for b.Loop() {
		out := io.Writer(io.Discard)
		var gz *gzip.Writer
		if compress {
			gz, _ = gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
			out = gz
		}
		if err := w.Write(out, nil); err != nil {
			b.Fatal(err)
		}
		if gz != nil {
			_ = gz.Close()
		}
	}
}
