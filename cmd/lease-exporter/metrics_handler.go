package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/lease-exporter/lease-exporter/collector"
)

// metricsHandler serves the text format (what Prometheus asks for unless native histograms
// are on) through the fast per-lease writer, and every other format (protobuf, OpenMetrics)
// through client_golang with the same series. Both share one limit on concurrent scrapes;
// simultaneous gzip text scrapes share one render (sharedRenders).
type metricsHandler struct {
	self     prometheus.Gatherer // everything except the per-lease series
	text     *collector.TextWriter
	slow     http.Handler
	inFlight chan struct{} // nil: no limit
	shared   sharedRenders
	logger   *slog.Logger
}

func newMetricsHandler(self, full prometheus.Gatherer, text *collector.TextWriter, maxRequests int, logger *slog.Logger) *metricsHandler {
	h := &metricsHandler{self: self, text: text, logger: logger}
	h.slow = promhttp.HandlerFor(full, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	})
	if maxRequests > 0 {
		h.inFlight = make(chan struct{}, maxRequests)
	}
	return h
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.inFlight != nil {
		select {
		case h.inFlight <- struct{}{}:
			defer func() { <-h.inFlight }()
		default:
			http.Error(w, fmt.Sprintf("too many concurrent scrapes (limit %d, set by --web.max-requests); try again later", cap(h.inFlight)),
				http.StatusServiceUnavailable)
			return
		}
	}
	// Prometheus lists text/plain in every Accept header it sends, even when it prefers
	// protobuf (native histograms). We have no histograms to lose, and at 100k Leases the
	// client_golang path takes ~9 s and triples peak memory, so any client that accepts text
	// gets the fast path; only clients refusing text reach client_golang.
	if !acceptsText(r.Header.Get("Accept")) {
		h.slow.ServeHTTP(w, r)
		return
	}
	format := expfmt.Negotiate(r.Header)
	if format.FormatType() != expfmt.TypeTextPlain {
		format = expfmt.NewFormat(expfmt.TypeTextPlain).WithEscapingScheme(model.UnderscoreEscaping)
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

// acceptsText reports whether the Accept header allows the text format (or names none).
func acceptsText(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		media, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if media != "text/plain" && media != "*/*" {
			continue
		}
		if q := strings.ReplaceAll(params, " ", ""); strings.Contains(q, "q=0;") || strings.HasSuffix(q, "q=0") ||
			strings.Contains(q, "q=0.0;") || strings.HasSuffix(q, "q=0.0") {
			continue // explicitly refused
		}
		return true
	}
	return false
}
