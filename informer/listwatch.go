package informer

import (
	"context"
	"sync"
	"sync/atomic"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// trackedListWatch lists and watches Leases in one namespace ("" for all), tells health
// about lists and about watches opening and closing (for staleness), and drops Leases
// outside this shard from lists before the reflector copies them.
type trackedListWatch struct {
	client    kubernetes.Interface
	watcher   kubernetes.Interface // opens the watches; see WatchConfig
	namespace string
	tweak     func(*metav1.ListOptions)
	keep      func(namespace, name string) bool
	health    *health
	// catchingUp is set while this scope's streaming list sends its initial events; the
	// store clears it (Replace) when they are all in, or the watch when it ends early.
	catchingUp atomic.Bool
}

func (t *trackedListWatch) listWatcher() cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc:  t.list,
		WatchFuncWithContext: t.watch,
	}, t.client)
}

func (t *trackedListWatch) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	t.tweak(&opts)
	list, err := t.client.CoordinationV1().Leases(t.namespace).List(ctx, opts)
	if err != nil {
		return nil, err // the reflector hands it to the watch error handler
	}
	list.Items = filterItems(list.Items, t.keep)
	t.health.listed()
	return list, nil
}

func (t *trackedListWatch) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	t.tweak(&opts)
	w, err := t.watcher.CoordinationV1().Leases(t.namespace).Watch(ctx, opts)
	if err != nil {
		// The reflector retries these itself without telling the watch error handler,
		// so this is the only place an API server outage is seen.
		if utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err) {
			t.health.failed(err)
		}
		return nil, err
	}
	streaming := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	t.catchingUp.Store(streaming)
	t.health.opened(streaming)
	return &trackedWatch{Interface: w, scope: t}, nil
}

func filterItems(items []coordinationv1.Lease, keep func(string, string) bool) []coordinationv1.Lease {
	if keep == nil {
		return items
	}
	kept := items[:0]
	for i := range items {
		if keep(items[i].Namespace, items[i].Name) {
			kept = append(kept, items[i])
		}
	}
	return kept
}

// trackedWatch tells health when the reflector abandons a watch, which it does as soon as
// the stream ends. The reflector reads the events from the inner watch directly.
type trackedWatch struct {
	watch.Interface
	once  sync.Once
	scope *trackedListWatch
}

// Stop ends the watch.
func (w *trackedWatch) Stop() {
	w.once.Do(func() { w.scope.health.closed(w.scope.catchingUp.Swap(false)) })
	w.Interface.Stop()
}
