// Package exposition serves the exporter's metrics over HTTP: it negotiates the format,
// renders the per-lease series through the fast text writer (collector.TextWriter) or
// client_golang, merges them with the exporter's own metrics, and streams them. The command builds what the handler serves (the collectors, once,
// in one composition root), mounts it and limits its callers.
package exposition

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lease-exporter/lease-exporter/collector"
)

// Handler serves the text format (what Prometheus asks for unless native histograms are on,
// see negotiate.go) through the fast per-lease writer, and every other format through
// client_golang with the same series. The text streams: the writer reads the cache once,
// walks that snapshot in the order the cache keeps and hands out each MiB as it fills (the
// first 60 KiB at once), gzipped as it goes when the client accepts gzip, so the first byte
// leaves at once and a scrape holds a buffer and its snapshot (two pointers per lock), never
// the exposition, whatever the number of locks.
//
// Simultaneous scrapes each render: sharing one render would need the whole compressed body
// held for latecomers, memory growing with the locks, and no byte sent before the last was
// rendered. Two Prometheus replicas scraping a 100k-lock
// exporter every 30 s cost two renders of about 0.13 s of CPU each, gzip (docs/benchmarks.md).
type Handler struct {
	self   prometheus.Gatherer // everything except the per-lease series
	text   *collector.TextWriter
	slow   http.Handler
	logger *slog.Logger
}

// NewHandler returns the handler of the per-lease series, merged with what self gathers
// (self-metrics, Go and process collectors, the status collector). text and series are the
// two renderings of the same per-lease series, built alike (same view, clock and options):
// text for the text format, series for every other.
func NewHandler(self prometheus.Gatherer, text *collector.TextWriter, series *collector.LeaseCollector, logger *slog.Logger) *Handler {
	leases := prometheus.NewRegistry()
	leases.MustRegister(series)
	return &Handler{
		self: self,
		text: text,
		slow: promhttp.HandlerFor(prometheus.Gatherers{self, leases}, promhttp.HandlerOpts{
			ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelError),
			ErrorHandling: promhttp.ContinueOnError,
		}),
		logger: logger,
	}
}

// gzipWriters are reused: each holds its compression state (~1 MB). They are
// klauspost/compress's gzip, the same format as compress/gzip (client_golang already depends
// on the module), about twice as fast at BestSpeed: at 100k Leases compression is half of a
// gzip scrape's time (docs/benchmarks.md). BestSpeed: the exposition is highly repetitive,
// and default compression would triple the scrape time for a few percent smaller payload.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return w
}}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	format, ok := textFormat(r.Header)
	if !ok {
		h.slow.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", string(format))
	var out io.Writer = w
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzipWriters.Get().(*gzip.Writer)
		gz.Reset(w)
		defer func() {
			_ = gz.Close()       // the trailer; an error is the client gone, as below
			gz.Reset(io.Discard) // or the pooled writer would keep this response alive
			gzipWriters.Put(gz)
		}()
		out = &flushFirst{Writer: gz, flush: func() {
			_ = gz.Flush()
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}}
	}
	mfs, err := h.self.Gather()
	if err != nil {
		// As promhttp.ContinueOnError: serve what was gathered, log what was not.
		h.logger.Error("gathering self-metrics", "err", err)
	}
	if err := h.text.Write(out, mfs); err != nil {
		h.logger.Debug("writing metrics response", "err", err) // the client went away
	}
}

// flushFirst flushes after the first write: the compressor holds its input until a block is
// full and net/http its output until 2 KB, so without it a gzip scrape's first byte would
// wait for tens of kilobytes of compressed exposition. After that the blocks flow as they
// fill; flushing each would cost compression and a system call per write.
type flushFirst struct {
	io.Writer
	flush   func()
	flushed bool
}

func (f *flushFirst) Write(p []byte) (int, error) {
	n, err := f.Writer.Write(p)
	if !f.flushed {
		f.flushed = true
		f.flush()
	}
	return n, err
}
