// Package exposition serves the exporter's metrics over HTTP: it negotiates the format,
// renders the per-lease series through the fast text writer (collector.TextWriter) or
// client_golang, merges them with the exporter's own metrics, and lets simultaneous gzip
// scrapes share one render. The command builds what the handler serves (the collectors, once,
// in one composition root), mounts it and limits its callers.
package exposition

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lease-exporter/lease-exporter/collector"
)

// Handler serves the text format (what Prometheus asks for unless native histograms are on,
// see negotiate.go) through the fast per-lease writer, and every other format through
// client_golang with the same series. Simultaneous gzip text scrapes share one render
// (sharedRenders).
type Handler struct {
	self   prometheus.Gatherer // everything except the per-lease series
	text   *collector.TextWriter
	slow   http.Handler
	shared sharedRenders
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

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	format, ok := textFormat(r.Header)
	if !ok {
		h.slow.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", string(format))
	write := func(out io.Writer) {
		mfs, err := h.self.Gather()
		if err != nil {
			// As promhttp.ContinueOnError: serve what was gathered, log what was not.
			h.logger.Error("gathering self-metrics", "err", err)
		}
		if err := h.text.Write(out, mfs); err != nil {
			h.logger.Debug("writing metrics response", "err", err) // the client went away
		}
	}
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		write(w)
		return
	}
	// BestSpeed (see gzipWriters): at 100k Leases the exposition is ~100 MB; default
	// compression would triple the scrape time for a few percent smaller payload.
	body, err := h.shared.do(r.Context(), string(format), write)
	if errors.Is(err, errRenderFailed) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if err != nil {
		return // the client went away while waiting
	}
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if _, err := w.Write(body); err != nil {
		h.logger.Debug("writing metrics response", "err", err)
	}
}
