// Package informer owns everything about talking to the API server: it watches Leases with a
// shared informer, keeps a compact cache of them, records what it observes on the watch, and
// hands the collector a read-only View.
package informer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// View is what the collector may see of the cache: read-only records, whether the cache has
// synced, and how current it is.
type View interface {
	// HasSynced reports whether the initial list of every watched namespace is in the cache.
	HasSynced() bool
	// Range calls fn for every cached Lease. fn must not modify or retain the record's fields.
	Range(fn func(*Lease))
	// FreshAsOf returns the latest time at which the cache is known to match the API server.
	FreshAsOf(now time.Time) time.Time
}

// Leases watches Leases and implements View.
type Leases struct {
	factories []informers.SharedInformerFactory
	informers []cache.SharedIndexInformer
	health    *health
}

var _ View = (*Leases)(nil)

// New builds the informers; nothing talks to the API server until Start.
func New(client kubernetes.Interface, opts Options, logger *slog.Logger, reg prometheus.Registerer) (*Leases, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	namespaces := opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	m := newMetrics(reg)
	l := &Leases{health: newHealth(logger, m, len(namespaces), now)}
	tweak := opts.tweakListOptions()
	watcher := opts.WatchClient
	if watcher == nil {
		watcher = client
	}
	for _, ns := range namespaces {
		lw := &trackedListWatch{client: client, watcher: watcher, namespace: ns, tweak: tweak, keep: opts.shardFilter(),
			health: l.health, metrics: m, now: now}
		// One factory per namespace: namespaced RBAC (a Role per namespace) cannot list
		// cluster-wide, and one field selector cannot name several namespaces.
		factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
		inf := factory.InformerFor(&coordinationv1.Lease{}, func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
			return cache.NewSharedIndexInformerWithOptions(lw.listWatcher(), &coordinationv1.Lease{}, cache.SharedIndexInformerOptions{})
		})
		obs := newObserver(now)
		obs.store = inf.GetStore()
		if err := inf.SetTransform(obs.transform); err != nil {
			return nil, fmt.Errorf("set lease transform: %w", err)
		}
		if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			l.health.failed(err)
		}); err != nil {
			return nil, fmt.Errorf("set watch error handler: %w", err)
		}
		if _, err := inf.AddEventHandler(obs.handler()); err != nil {
			return nil, fmt.Errorf("add lease event handler: %w", err)
		}
		l.factories = append(l.factories, factory)
		l.informers = append(l.informers, inf)
	}
	return l, nil
}

// Start starts watching; the informers stop when ctx is done.
func (l *Leases) Start(ctx context.Context) {
	for _, f := range l.factories {
		f.Start(ctx.Done())
	}
}

// Shutdown waits for the informers' goroutines to end after ctx passed to Start is done.
func (l *Leases) Shutdown() {
	for _, f := range l.factories {
		f.Shutdown()
	}
}

// WaitForCacheSync blocks until every informer has synced; the error says why it stopped early.
func (l *Leases) WaitForCacheSync(ctx context.Context) error {
	for _, f := range l.factories {
		if err := f.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
			return err
		}
	}
	return nil
}

// HasSynced implements View.
func (l *Leases) HasSynced() bool {
	for _, inf := range l.informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// Range implements View.
func (l *Leases) Range(fn func(*Lease)) {
	for _, inf := range l.informers {
		for _, obj := range inf.GetStore().List() {
			if lease, ok := obj.(*Lease); ok {
				fn(lease)
			}
		}
	}
}

// FreshAsOf implements View.
func (l *Leases) FreshAsOf(now time.Time) time.Time { return l.health.FreshAsOf(now) }
