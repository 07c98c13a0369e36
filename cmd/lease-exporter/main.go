// Command lease-exporter exports the health of every Kubernetes Lease as Prometheus metrics.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/version"
	"k8s.io/client-go/rest"

	"github.com/lease-exporter/lease-exporter/collector"
	"github.com/lease-exporter/lease-exporter/events"
	"github.com/lease-exporter/lease-exporter/informer"
)

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	opts, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "lease-exporter: %v\nRun 'lease-exporter --help' for usage.\n", err)
		return exitCode(err)
	}
	if opts.showVersion {
		fmt.Fprintln(stdout, version.Print("lease-exporter"))
		return exitOK
	}
	logger := newLogger(stderr, opts.logLevel, opts.logFormat)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, logger); err != nil {
		logger.Error("lease-exporter stopped", "err", err)
		return exitCode(err)
	}
	return exitOK
}

// run reads as the exporter's table of contents: client config, registry, informer, server, wait.
func run(ctx context.Context, opts *options, logger *slog.Logger) error {
	logger.Info("starting lease-exporter", "version", version.Info(), "build", version.BuildContext())
	client := opts.client
	client.UserAgent = "lease-exporter/" + version.Version
	cfg, source, err := informer.RESTConfig(client)
	if err != nil {
		return kubeConfigError{err}
	}
	reg := newRegistry()
	watch := opts.derived.informer
	leases, writer, err := newInformer(cfg, opts, &watch, logger, reg)
	if err != nil {
		return kubeConfigError{fmt.Errorf("build client from %s: %w", source, err)}
	}
	// The server listens before the start-up checks, so the liveness probe passes while they
	// wait (a start queued by API Priority and Fairness can take their whole timeout) and
	// /readyz says which one runs.
	state := newStarting(fmt.Sprintf("checking that the API server %s answers (waiting up to --kube.reach-timeout %s)", cfg.Host, opts.reachTimeout))
	srv := newServer(opts.telemetryPath, opts.routePrefix(), state.handlers(), state.readiness, opts.enablePprof)
	l, err := listen(opts)
	if err != nil {
		return err
	}
	// serveCtx ends serving; checkCtx ends the checks when serving fails meanwhile.
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	checkCtx, stopChecks := context.WithCancel(ctx)
	defer stopChecks()
	served := make(chan error, 1)
	go func() {
		err := serve(serveCtx, srv, l, opts, logger)
		stopChecks()
		served <- err
	}()
	// stop ends serving after a failed check and returns the check's error, or serving's if
	// that failed first (its failure ended the check).
	stop := func(checkErr error) error {
		stopServing()
		if err := <-served; err != nil && ctx.Err() == nil {
			return err
		}
		return checkErr
	}
	if err := checkStartup(checkCtx, leases, state, opts, cfg.Host, source, watch, logger); err != nil {
		return stop(err)
	}
	// The informers get their own context: Shutdown waits for them to stop, so when serve
	// fails (e.g. the web config's certificate cannot be read) they must be stopped here, or
	// run never returns.
	informerCtx, stopInformers := context.WithCancel(ctx)
	leases.Start(informerCtx)
	defer func() { stopInformers(); leases.Shutdown() }()
	go logSynced(informerCtx, leases, logger)
	rebuilt, stopEvents := runEvents(ctx, writer, leases, watch, state, logger)
	defer stopEvents()
	state.open(newHandlers(opts, reg, leases, rebuilt, logger), func() error { return leases.Ready(time.Now()) })
	return <-served
}

// newInformer builds the informer, and first what its stores tell of every observation, into
// watch: the class counters (collector.Elections, also the history's Cleared hook), then,
// with --events, the Events writer, which it returns (nil without).
func newInformer(cfg *rest.Config, opts *options, watch *informer.Options, logger *slog.Logger, reg prometheus.Registerer) (*informer.Cache, *events.Writer, error) {
	elections := collector.NewElections(reg, opts.derived.collectors.Shard)
	watch.History.Cleared = elections.Cleared
	observers := informer.Observers{elections}
	var writer *events.Writer
	if eo := opts.derived.events; eo != nil {
		var err error
		if writer, err = newEventsWriter(cfg, *eo, logger, reg); err != nil {
			return nil, nil, err
		}
		observers = append(observers, writer)
	}
	watch.Observer = observers
	leases, err := informer.New(cfg, *watch, logger.With("component", "informer"), reg)
	return leases, writer, err
}

// checkStartup runs the start-up checks in order, /readyz naming the one that runs: the API
// server at host answers, and whether it serves LeaseCandidates.
func checkStartup(ctx context.Context, leases *informer.Cache, state *starting, opts *options, host, source string, watch informer.Options, logger *slog.Logger) error {
	if err := leases.CheckReachable(ctx, opts.reachTimeout); err != nil {
		return unreachableError{fmt.Errorf("%w (configured by %s)", err, source)}
	}
	logger.Info("connected to API server", "host", host, "config", source, "watching", watch.Describe())
	state.enter(fmt.Sprintf("discovering whether the API server %s serves LeaseCandidates (waiting up to --kube.reach-timeout %s)", host, opts.reachTimeout))
	if err := leases.DiscoverCandidates(ctx, opts.reachTimeout); err != nil {
		return unreachableError{fmt.Errorf("%w (configured by %s)", err, source)}
	}
	return nil
}

// runEvents starts the Events writer, if any, and the rebuild of the history; stop ends it
// and waits. It has its own context, ended and waited for before run returns, whether ctx
// ended (SIGTERM) or serving failed: the writer stands down and releases its election Lease,
// so another replica writes at once.
func runEvents(ctx context.Context, writer *events.Writer, leases *informer.Cache, watch informer.Options, state *starting, logger *slog.Logger) (rebuilt *events.History, stop func()) {
	if writer == nil {
		return nil, func() {}
	}
	eventsCtx, stopEvents := context.WithCancel(ctx)
	state.enter("rebuilding the election history from Events")
	return startEvents(eventsCtx, writer, leases, watch, logger), func() { stopEvents(); writer.Wait() }
}

func logSynced(ctx context.Context, leases *informer.Cache, logger *slog.Logger) {
	start := time.Now()
	if err := leases.WaitForCacheSync(ctx); err == nil {
		logger.Info("lease cache synced; ready", "after", time.Since(start).Round(time.Millisecond))
	}
}
