package informer

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// The Cache's methods: its start-up checks, its lifecycle, and the view it serves (View,
// CandidateView, DeletionView, and a lock by its address).

// CheckReachable asks the API server for its version, so an unreachable or misconfigured
// cluster is a clear error at start instead of an exporter that never becomes ready.
func (l *Cache) CheckReachable(ctx context.Context, timeout time.Duration) error {
	err := retry(ctx, timeout, func(ctx context.Context) error {
		_, err := l.startup.List.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return nil // any HTTP answer proves the server is there; RBAC is judged later
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("API server %s not reachable within %s: %w", l.host, timeout, err)
	}
	return nil
}

// retry is the start-up retry loop: it calls attempt once a second until attempt succeeds
// or timeout passes, and then returns the last attempt's error. At start a blip must not stop
// the exporter, but an API server that stays silent must (exit code 4).
func retry(ctx context.Context, timeout time.Duration, attempt func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// DiscoverCandidates finds out whether the API server serves LeaseCandidates (coordinated
// leader election) in a version the exporter reads and lets it list them; if so, it adds their
// scopes, which Start then runs. Call it before Start. Not served, forbidden or turned off
// (Options.NoCandidates) leaves the feature off, says so in one info line and in
// lease_exporter_lease_candidates_watched, and is no error; only an API server that does not
// answer within timeout is (it is retried until then: the server just proved reachable, so
// silence is a blip).
func (l *Cache) DiscoverCandidates(ctx context.Context, timeout time.Duration) error {
	if l.opts.NoCandidates {
		l.logger.Info("not watching LeaseCandidates: turned off by option")
		return nil
	}
	namespaces := l.opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var version string
	var unavailable error
	err := retry(ctx, timeout, func(ctx context.Context) error {
		var err error
		version, err = servedCandidateVersion(ctx, l.startup, namespaces)
		if errors.Is(err, errCandidatesUnavailable) {
			unavailable = err // an answer
			return nil
		}
		return err
	})
	if apierrors.IsTooManyRequests(err) {
		// A 429 is an answer: the server is there and its flow control (API Priority and
		// Fairness) rejects the exporter. Exiting would crash-loop the Pod for as long as the
		// throttling lasts and then wait out the kubelet's back-off; the Leases matter more.
		l.logger.Warn("not watching LeaseCandidates: the API server throttled their discovery (429 Too Many Requests) throughout; "+
			"restart the exporter to retry once its flow control allows", "within", timeout, "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("discover LeaseCandidates within %s: %w", timeout, err)
	}
	if unavailable != nil {
		l.logger.Info("not watching LeaseCandidates: coordinated leader election is not available to the exporter", "err", unavailable)
		return nil
	}
	// The lease selector is not applied: a candidate's labels are not its Lease's (the
	// components set none), so any selector would drop them all.
	opts := l.opts
	opts.LeaseSelector = ""
	for _, s := range newScopes(candidateSource{version}, lock.ObserveCandidate, l.clients, namespaces, opts, opts.now(), l.health.metrics, l.health) {
		l.scopes = append(l.scopes, s)
		l.candidates = append(l.candidates, s.store)
	}
	l.health.metrics.candidatesWatched.Set(1)
	l.logger.Info("watching LeaseCandidates", "version", "coordination.k8s.io/"+version)
	return nil
}

// WatchingCandidates implements CandidateView.
func (l *Cache) WatchingCandidates() bool { return len(l.candidates) > 0 }

// RangeCandidates calls fn for every cached LeaseCandidate; none while they are not watched.
// fn must not modify or retain the record's fields.
func (l *Cache) RangeCandidates(fn func(*lock.Candidate)) { rangeStores(l.candidates, fn) }

// Start starts watching; the reflectors stop when ctx is done.
func (l *Cache) Start(ctx context.Context) {
	for _, s := range l.scopes {
		l.wg.Go(func() { s.run(ctx) })
	}
}

// Shutdown waits for the reflectors to end after ctx passed to Start is done.
func (l *Cache) Shutdown() { l.wg.Wait() }

// WaitForCacheSync blocks until every scope has synced; the error says why it stopped early.
func (l *Cache) WaitForCacheSync(ctx context.Context) error {
	for _, s := range l.scopes {
		if !s.waitSynced(ctx) {
			return fmt.Errorf("lease cache not synced: %w", context.Cause(ctx))
		}
	}
	return nil
}

// HasSynced implements View.
func (l *Cache) HasSynced() bool {
	for _, s := range l.scopes {
		if !s.HasSynced() {
			return false
		}
	}
	return true
}

// Range implements View.
func (l *Cache) Range(fn func(*lock.Lease)) { rangeStores(l.locks, fn) }

// InOrder implements Ordered.
func (l *Cache) InOrder(o lock.Order, nodes func(*lock.Lease) bool, fn func([]*lock.Lease) bool) {
	walkStores(l.locks, o, nodes, fn)
}

// Scan implements Ordered.
func (l *Cache) Scan(fn func([]*lock.Lease)) { scanStores(l.locks, fn) }

// rangeStores calls fn for every record of stores, one store's snapshot at a time, reusing
// one buffer: a scrape at 100k Leases then copies pointers without growing a slice per store.
func rangeStores[R record[R]](stores []*store[R], fn func(R)) {
	var buf []R
	for _, s := range stores {
		buf = s.list(buf[:0])
		for _, r := range buf {
			fn(r)
		}
	}
}

// RangeDeleted implements DeletionView.
func (l *Cache) RangeDeleted(fn func(*lock.Tombstone)) { l.deleted.RangeDeleted(fn) }

// FreshAsOf implements View.
func (l *Cache) FreshAsOf(now time.Time) time.Time { return l.health.FreshAsOf(now) }

// Lookup returns the lock of the kind cached as namespace/name, nil if there is none: a map
// lookup per store (one per watched kind and namespace scope), where a pass over the view
// would visit every lock. The status page's detail asks it, and Has.
func (l *Cache) Lookup(kind lock.Kind, namespace, name string) *lock.Lease {
	key := namespace + "/" + name // a Lease's StoreKey
	for _, s := range l.locks {
		if r, ok := s.get(key); ok && r.Kind() == kind {
			return r
		}
	}
	return nil
}

// Has reports whether a lock of the kind is cached as namespace/name. --expect asks it for
// each expected lock at every scrape.
func (l *Cache) Has(kind lock.Kind, namespace, name string) bool {
	return l.Lookup(kind, namespace, name) != nil
}
