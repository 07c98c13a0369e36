package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"net"
	"net/http"
	"strings"
	"time"
)

// filterProxy serves the exporter's exposition cut to one candidate set on its own loopback
// port, so that a Prometheus scraping it parses and caches only that set, as it would from an
// exporter that exposed only it. Comment lines pass through. The proxy's own work (fetching
// and filtering the full exposition) shows in that Prometheus' scrape duration, not in its
// CPU or memory.
type filterProxy struct {
	srv  *http.Server
	addr string
}

func startFilter(exp *proc, keep func([]byte) bool) (*filterProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		_, _, body, err := exp.scrape(textIdentity, true)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		var out bytes.Buffer
		out.Grow(len(body) / 2)
		for line := range bytes.Lines(body) {
			if len(line) > 0 && (line[0] == '#' || keep(line)) {
				out.Write(line)
			}
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			_, _ = w.Write(out.Bytes())
			return
		}
		// Prometheus asks for gzip, and the exporter serves it: decompressing is part of
		// what a scrape costs Prometheus.
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		_, _ = gz.Write(out.Bytes())
		_ = gz.Close()
	})
	f := &filterProxy{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, addr: ln.Addr().String()}
	go func() { _ = f.srv.Serve(ln) }() // returns ErrServerClosed on close
	return f, nil
}

func (f *filterProxy) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = f.srv.Shutdown(ctx)
}
