package main

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lease-exporter/lease-exporter/events"
	"github.com/lease-exporter/lease-exporter/informer"
)

// newEventsWriter builds the Events writer (--events) over its own client of the API server:
// its writes and its election then never queue behind the informer's lists.
func newEventsWriter(cfg *rest.Config, opts events.Options, logger *slog.Logger, reg prometheus.Registerer) (*events.Writer, error) {
	client, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, err
	}
	return events.New(client, opts, logger.With("component", "events"), reg), nil
}

// startEvents starts the writer over the cache and, in the background, rebuilds the
// history from the Events already written (unless --events.rebuild=false), once the cache has
// synced: only Events regarding a lock it holds, or a tombstone of one, are taken. The pages
// show the history once read. A failed rebuild (Events not listable) is logged: the pages
// then show what this process observes.
func startEvents(ctx context.Context, w *events.Writer, leases *informer.Cache, watch informer.Options, logger *slog.Logger) *events.History {
	w.Run(ctx, leases)
	h := &events.History{}
	logger = logger.With("component", "events")
	if !w.Rebuilds() {
		logger.Info("not rebuilding history from Events (--events.rebuild=false); the pages show only what this process observes")
		return h
	}
	go func() {
		if leases.WaitForCacheSync(ctx) != nil {
			return
		}
		st, err := events.Rebuild(ctx, w.Client(), events.KnownTo(leases), watch.Namespaces, watch.History.Tenures, h)
		switch {
		case apierrors.IsForbidden(err):
			logger.Error("cannot rebuild history from Events: grant the exporter's ServiceAccount list on events.events.k8s.io (the chart does with events.enabled=true); the pages show only what this process observed", "err", err)
		case err != nil && ctx.Err() == nil:
			logger.Error("cannot rebuild history from Events; the pages show only what this process observed", "err", err)
		case err == nil:
			logger.Info("rebuilt history from Events", st.LogAttrs()...)
		}
	}()
	return h
}
