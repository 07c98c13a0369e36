package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/lease-exporter/lease-exporter/collector"
	"github.com/lease-exporter/lease-exporter/events"
	"github.com/lease-exporter/lease-exporter/exposition"
	"github.com/lease-exporter/lease-exporter/statuspage"
)

// The probes' paths, which --web.telemetry-path may not take.
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
)

// shutdownTimeout leaves a scrape in flight time to finish while staying inside Kubernetes'
// default 30s termination grace period and the 5s our users expect.
const shutdownTimeout = 4 * time.Second

// newRegistry returns the exporter's own registry with the standard process collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		versioncollector.NewCollector("lease_exporter"),
	)
	return reg
}

// handlers are what the server serves from the cache: the exposition of the view's Leases and
// of the registry, and the lease status pages with their JSON API. Both range over every
// Lease, so they share one in-flight limit.
type handlers struct{ metrics, leases http.Handler }

// cache is what the handlers read: the informer's Cache.
type cache interface {
	collector.Source
	statuspage.Source
}

// newHandlers wires everything that reads the cache, in this one place: every collector of
// collector.Build's table from the settings Validate derived (the registered ones onto reg),
// the exposition of them, and the status pages.
func newHandlers(opts *options, reg *prometheus.Registry, c cache, rebuilt *events.History, logger *slog.Logger) handlers {
	limit := newLimit(opts.maxRequests)
	cs := collector.Build(c, opts.derived.collectors)
	reg.MustRegister(cs.Registered...)
	pages := statuspage.New(c, logger.With("component", "statuspage"), nil)
	if rebuilt != nil { // an interface holding a nil *events.History would not be nil
		pages = pages.WithRebuilt(rebuilt)
	}
	return handlers{
		metrics: limit(exposition.NewHandler(reg, cs.Text, cs.Leases, logger)),
		leases:  limit(pages.LinkGrafana(opts.grafanaURL).Under(opts.routePrefix())),
	}
}

// newLimit returns a wrapper that answers 503 to requests beyond max at a time (0: no limit),
// counted together over every handler it wraps: at 100k Leases a scrape holds ~100 MB, so
// piled-up scrapes or status pages would exhaust the memory limit.
func newLimit(max int) func(http.Handler) http.Handler {
	if max <= 0 {
		return func(h http.Handler) http.Handler { return h }
	}
	inFlight := make(chan struct{}, max)
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case inFlight <- struct{}{}:
				defer func() { <-inFlight }()
				h.ServeHTTP(w, r)
			default:
				http.Error(w, fmt.Sprintf("too many concurrent requests (limit %d, set by --web.max-requests); try again later", max),
					http.StatusServiceUnavailable)
			}
		})
	}
}

// newServer builds the HTTP server: metrics at metricsPath, the lease status pages, probes,
// landing page and, with enablePprof, the profiling endpoints. ready returns nil when /readyz
// answers 200, else why not, which becomes its 503 body. With a routePrefix (--web.external-url's path), every route is served under
// it as well as at the root: a reverse proxy may pass the prefix on or strip it.
func newServer(metricsPath, routePrefix string, h handlers, ready func() error, enablePprof bool) *http.Server {
	mux := http.NewServeMux()
	mux.Handle(metricsPath, h.metrics)
	for _, pattern := range statuspage.Patterns {
		mux.Handle(pattern, h.leases)
	}
	mux.HandleFunc(healthzPath, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc(readyzPath, func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	if enablePprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.Handle("/", landingPage(metricsPath, "/"))
	var handler http.Handler = mux
	if routePrefix != "" {
		prefixed := http.NewServeMux()
		// The landing page checks its own path, so it is served under the prefix unstripped.
		prefixed.Handle(routePrefix+"/{$}", landingPage(metricsPath, routePrefix+"/"))
		prefixed.Handle(routePrefix+"/", http.StripPrefix(routePrefix, mux))
		prefixed.Handle("/", mux)
		handler = prefixed
	}
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		// Long enough for a full scrape of 100k Leases over a slow link, short enough
		// that stuck clients cannot pile up.
		WriteTimeout: 60 * time.Second,
		IdleTimeout:  2 * time.Minute,
	}
}

// landingPage links to the routes, under prefix ("/" or "/<path>/").
func landingPage(metricsPath, prefix string) http.Handler {
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "lease-exporter",
		Description: "Prometheus exporter for Kubernetes Lease and leader-election health",
		Version:     version.Info(),
		RoutePrefix: prefix,
		Links: []web.LandingLinks{
			{Address: metricsPath, Text: "Metrics"},
			{Address: statuspage.Path, Text: "Leases: status and election history"},
			{Address: healthzPath, Text: "Health"},
			{Address: readyzPath, Text: "Readiness"},
		},
	})
	if err != nil {
		panic(fmt.Sprintf("landing page config is static and valid: %v", err))
	}
	return landing
}

// listen opens --web.listen-address.
func listen(opts *options) (net.Listener, error) {
	l, err := net.Listen("tcp", opts.listenAddress)
	if err != nil {
		return nil, fmt.Errorf("listen on --web.listen-address %s: %w", opts.listenAddress, err)
	}
	return l, nil
}

// serve runs srv on l until ctx is done, then lets in-flight scrapes finish.
func serve(ctx context.Context, srv *http.Server, l net.Listener, opts *options, logger *slog.Logger) error {
	systemdSocket := false
	flags := &web.FlagConfig{
		WebListenAddresses: &[]string{opts.listenAddress},
		WebSystemdSocket:   &systemdSocket,
		WebConfigFile:      &opts.webConfigFile,
	}
	errc := make(chan error, 1)
	go func() { errc <- web.Serve(l, srv, flags, logger.With("component", "web")) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", shutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down HTTP server: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve HTTP: %w", err)
	}
	return nil
}
