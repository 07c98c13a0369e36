package informer

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/lease-exporter/lease-exporter/lock"
)

// scope is one list/watch of one source over one namespace ("" for all). It owns the
// client-go reflector that lists, watches, resumes and relists; the store that reflector
// writes to (the scope is the reflector's queue); and the state of its watch, which it alone
// reports to health: lists and watches opening here, watches ending in trackedWatch, the end
// of a list in Replace, failures from the reflector.
type scope[R record[R]] struct {
	*store[R]
	src       source[R]
	clients   Clients
	namespace string
	tweak     func(*metav1.ListOptions) // the server-side filters
	health    reporter
	reflector cache.Controller
}

var (
	_ cache.Queue                  = (*scope[*lock.Lease])(nil)
	_ cache.ReflectorBookmarkStore = (*scope[*lock.Lease])(nil)
	_ cache.TransformingStore      = (*scope[*lock.Lease])(nil)
)

// newScopes returns one scope of src per namespace: namespaced RBAC (a Role per namespace)
// cannot list cluster-wide, and one field selector cannot name several namespaces.
// observe is the record type's observation, observe itself for every lock kind.
func newScopes[R record[R]](src source[R], observe func(prev, next R, now int64, live bool) R, c Clients, namespaces []string,
	opts Options, now func() time.Time, m *metrics, h *health) []*scope[R] {
	scopes := make([]*scope[R], 0, len(namespaces))
	keep, tweak := opts.shardFilter(), opts.tweakListOptions()
	for _, ns := range namespaces {
		s := &scope[R]{store: newStore(src.decode, observe, keep, now, m), src: src, clients: c, namespace: ns,
			tweak: tweak, health: h.scopeIn(src.resource(), ns)}
		s.orders = src.orderings()
		s.firstEvent = s.health.delivered
		s.reflector = cache.New(&cache.Config{
			Queue: s,
			// The client tells the reflector whether streaming lists are possible (a fake
			// clientset's are not); a source's clients are all real or all fakes.
			ListerWatcher: cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
				ListWithContextFunc:  s.listFunc,
				WatchFuncWithContext: s.watchFunc,
			}, c.List),
			ObjectType:        src.object(),
			ObjectDescription: src.resource(),
			Process:           func(any, bool) error { return nil }, // never called: see store.Pop
			WatchErrorHandlerWithContext: func(_ context.Context, _ *cache.Reflector, err error) {
				s.health.failed(err)
				if opts.Failed != nil {
					opts.Failed(src.resource(), ns, s.HasSynced(), err)
				}
			},
		})
		scopes = append(scopes, s)
	}
	return scopes
}

// run runs the reflector until ctx is done.
func (s *scope[R]) run(ctx context.Context) { s.reflector.RunWithContext(ctx) }

// waitSynced blocks until the initial list is cached (true) or ctx is done (false).
func (s *scope[R]) waitSynced(ctx context.Context) bool {
	select {
	case <-s.store.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *scope[R]) listFunc(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	s.tweak(&opts)
	list, err := s.src.list(ctx, s.clients, s.namespace, opts, s.keep)
	if err != nil {
		return nil, err // the reflector hands it to the watch error handler
	}
	s.health.listed()
	return list, nil
}

func (s *scope[R]) watchFunc(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.tweak(&opts)
	w, err := s.src.watch(ctx, s.clients, s.namespace, opts)
	if err != nil {
		// The reflector retries these itself without telling the watch error handler,
		// so this is the only place an API server outage is seen.
		// (A 429 was counted as it arrived: observeThrottling.)
		if utilnet.IsConnectionRefused(err) {
			s.health.failed(err)
		}
		return nil, err
	}
	s.health.opened(opts.SendInitialEvents != nil && *opts.SendInitialEvents)
	s.awaitingEvent.Store(true)
	// A streaming list's initial events reach the store through Replace, never as live events.
	s.liveFrom.Store(s.now().Add(replayGrace).UnixMicro())
	return &trackedWatch{Interface: w, health: s.health, liveFrom: &s.liveFrom}, nil
}

// Replace caches a list, as store.Replace; after a streaming list it is also the end of the
// initial events, so the scope has caught up.
func (s *scope[R]) Replace(items []any, rv string) error {
	err := s.store.Replace(items, rv)
	s.health.caughtUp()
	return err
}

// trackedWatch tells health when the reflector abandons a watch, which it does as soon as
// the stream ends. The reflector reads the events from the inner watch directly.
type trackedWatch struct {
	watch.Interface
	once     sync.Once
	health   reporter
	liveFrom *atomic.Int64 // the store's: no event is live once the watch has ended
}

// Stop ends the watch.
func (w *trackedWatch) Stop() {
	w.once.Do(func() {
		w.liveFrom.Store(0)
		w.health.closed()
	})
	w.Interface.Stop()
}
