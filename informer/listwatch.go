package informer

import (
	"context"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// trackedListWatch lists and watches Leases in one namespace ("" for all) and wraps each
// watch so the exporter knows whether it is open (for staleness), counts its events, and
// drops Leases outside this shard before they reach the cache.
type trackedListWatch struct {
	client    kubernetes.Interface
	watcher   kubernetes.Interface // opens the watches; see WatchConfig
	namespace string
	tweak     func(*metav1.ListOptions)
	keep      func(namespace, name string) bool
	health    *health
	metrics   *metrics
	now       func() time.Time
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
	t.health.opened(streaming)
	tw := &trackedWatch{inner: w, out: make(chan watch.Event), done: make(chan struct{}), owner: t}
	go tw.run()
	return tw, nil
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

// trackedWatch forwards the events of one watch.
type trackedWatch struct {
	inner watch.Interface
	out   chan watch.Event
	done  chan struct{}
	once  sync.Once
	owner *trackedListWatch
}

func (w *trackedWatch) run() {
	defer close(w.out)
	defer w.owner.health.closed()
	m := w.owner.metrics
	for ev := range w.inner.ResultChan() {
		m.countEvent(eventType(ev.Type))
		m.lastEventEpoch.Set(float64(w.owner.now().UnixMilli()) / 1e3)
		if ev.Type == watch.Bookmark && isInitialEventsEnd(ev.Object) {
			w.owner.health.caughtUp()
		}
		if !w.keep(ev) {
			continue
		}
		select {
		case w.out <- ev:
		case <-w.done:
			return
		}
	}
}

func (w *trackedWatch) keep(ev watch.Event) bool {
	l, ok := ev.Object.(*coordinationv1.Lease)
	return !ok || w.owner.keep == nil || ev.Type == watch.Bookmark || w.owner.keep(l.Namespace, l.Name)
}

// eventType is the label value of t, without allocating for the known types.
func eventType(t watch.EventType) string {
	switch t {
	case watch.Added:
		return "added"
	case watch.Modified:
		return "modified"
	case watch.Deleted:
		return "deleted"
	case watch.Bookmark:
		return "bookmark"
	case watch.Error:
		return "error"
	}
	return strings.ToLower(string(t))
}

func isInitialEventsEnd(obj runtime.Object) bool {
	l, ok := obj.(*coordinationv1.Lease)
	return ok && l.Annotations[metav1.InitialEventsAnnotationKey] == "true"
}

// Stop ends the watch; the reflector calls it when it abandons the watch.
func (w *trackedWatch) Stop() {
	w.once.Do(func() { close(w.done) })
	w.inner.Stop()
}

// ResultChan returns the filtered events.
func (w *trackedWatch) ResultChan() <-chan watch.Event { return w.out }
