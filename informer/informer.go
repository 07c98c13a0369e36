// Package informer owns everything about talking to the API server: it watches Leases with
// client-go's reflector, keeps a compact cache of them, records what it observes on the
// watch, and hands the collector a read-only View.
package informer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Leases watches Leases and implements View: per watched scope, one client-go reflector
// (a cache.Controller) lists and watches, and writes straight into that scope's store.
type Leases struct {
	controllers []cache.Controller
	stores      []*store
	health      *health
	wg          sync.WaitGroup
}

var _ View = (*Leases)(nil)

// New builds the reflectors; nothing talks to the API server until Start.
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
	watcher := client
	if opts.WatchConfig != nil {
		var err error
		if watcher, err = kubernetes.NewForConfig(WatchConfig(opts.WatchConfig, opts.WatchBatch, l.health.inInitialStream)); err != nil {
			return nil, fmt.Errorf("build watch client: %w", err)
		}
	}
	keep := opts.shardFilter()
	for _, ns := range namespaces {
		// One scope per namespace: namespaced RBAC (a Role per namespace) cannot list
		// cluster-wide, and one field selector cannot name several namespaces.
		lw := &trackedListWatch{client: client, watcher: watcher, namespace: ns, tweak: tweak, keep: keep,
			health: l.health}
		st := newStore(now, keep, m, l.health)
		st.catchingUp = &lw.catchingUp
		l.stores = append(l.stores, st)
		l.controllers = append(l.controllers, cache.New(&cache.Config{
			Queue:             st,
			ListerWatcher:     lw.listWatcher(),
			ObjectType:        &coordinationv1.Lease{},
			ObjectDescription: "leases.coordination.k8s.io",
			Process:           func(any, bool) error { return nil }, // never called: see store.Pop
			WatchErrorHandlerWithContext: func(_ context.Context, _ *cache.Reflector, err error) {
				l.health.failed(err)
			},
		}))
	}
	return l, nil
}

// Start starts watching; the reflectors stop when ctx is done.
func (l *Leases) Start(ctx context.Context) {
	for _, c := range l.controllers {
		l.wg.Go(func() { c.RunWithContext(ctx) })
	}
}

// Shutdown waits for the reflectors to end after ctx passed to Start is done.
func (l *Leases) Shutdown() { l.wg.Wait() }

// WaitForCacheSync blocks until every scope has synced; the error says why it stopped early.
func (l *Leases) WaitForCacheSync(ctx context.Context) error {
	for _, s := range l.stores {
		select {
		case <-s.synced:
		case <-ctx.Done():
			return fmt.Errorf("lease cache not synced: %w", context.Cause(ctx))
		}
	}
	return nil
}

// HasSynced implements View.
func (l *Leases) HasSynced() bool {
	for _, s := range l.stores {
		if !s.HasSynced() {
			return false
		}
	}
	return true
}

// Range implements View.
func (l *Leases) Range(fn func(*Lease)) {
	var buf []*Lease
	for _, s := range l.stores {
		buf = s.list(buf[:0])
		for _, lease := range buf {
			fn(lease)
		}
	}
}

// FreshAsOf implements View.
func (l *Leases) FreshAsOf(now time.Time) time.Time { return l.health.FreshAsOf(now) }
