package informer

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/lock"
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
// silence is a blip). A throttled discovery (429) is no error either: Start retries it with
// backoff until the API server answers, and then watches the candidates.
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
	var unavailable, throttled error
	err := retry(ctx, timeout, func(ctx context.Context) error {
		var err error
		version, err = servedCandidateVersion(ctx, l.startup, namespaces)
		switch {
		case errors.Is(err, errCandidatesUnavailable):
			unavailable = err // an answer
			return nil
		case apierrors.IsTooManyRequests(err):
			// Also an answer: the server is there and its flow control (API Priority and
			// Fairness) rejects the exporter. Waiting here would hold up the Leases, and
			// exiting would crash-loop the Pod for as long as the throttling lasts.
			throttled = err
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("discover LeaseCandidates within %s: %w", timeout, err)
	}
	switch {
	case throttled != nil:
		l.logger.Warn("not watching LeaseCandidates yet: the API server throttled their discovery (429 Too Many Requests); "+
			"watching the locks meanwhile and retrying the discovery with backoff until it answers", "err", throttled)
		l.rediscover = namespaces
	case unavailable != nil:
		l.logger.Info("not watching LeaseCandidates: coordinated leader election is not available to the exporter", "err", unavailable)
	default:
		l.addCandidates(version, namespaces)
	}
	return nil
}

// candidateBackoff bounds the waits between retries of a throttled candidate discovery: the
// first wait, doubled after each failure up to the last. API Priority and Fairness asks a
// throttled client to come back within a minute.
var candidateBackoff = struct{ first, max time.Duration }{time.Second, time.Minute}

// rediscoverCandidates retries the candidate discovery of namespaces with backoff until the
// API server answers, or ctx is done: a served and readable version starts the candidates'
// scopes (under ctx, Start's), anything else leaves them off as at start.
func (l *Cache) rediscoverCandidates(ctx context.Context, namespaces []string) {
	wait := candidateBackoff.first
	for attempts := 1; ; attempts++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		version, err := servedCandidateVersion(ctx, l.startup, namespaces)
		switch {
		case errors.Is(err, errCandidatesUnavailable):
			l.logger.Info("not watching LeaseCandidates: coordinated leader election is not available to the exporter", "err", err)
			return
		case err != nil:
			// Throttled again, or the API server not answering: the locks' watches report
			// that; only the wait grows.
			wait = min(2*wait, candidateBackoff.max)
			continue
		}
		for _, s := range l.addCandidates(version, namespaces) {
			l.wg.Go(func() { s.run(ctx) })
		}
		l.logger.Info("LeaseCandidate discovery answered after being throttled at start", "attempts", attempts)
		return
	}
}

// addCandidates adds the scopes of the LeaseCandidates of namespaces in version, and returns
// them for a caller after Start to run.
func (l *Cache) addCandidates(version string, namespaces []string) []runner {
	// The lease selector is not applied: a candidate's labels are not its Lease's (the
	// components set none), so any selector would drop them all.
	opts := l.opts
	opts.LeaseSelector = ""
	var added []runner
	l.mu.Lock()
	for _, s := range newScopes(candidateSource{version}, lock.ObserveCandidate, l.clients, namespaces, opts, opts.now(), l.health.metrics, l.health) {
		l.scopes = append(l.scopes, s)
		l.candidates = append(l.candidates, s.store)
		added = append(added, s)
	}
	l.mu.Unlock()
	l.health.metrics.candidatesWatched.Set(1)
	l.logger.Info("watching LeaseCandidates", "version", "coordination.k8s.io/"+version)
	return added
}

// WatchingCandidates implements CandidateView.
func (l *Cache) WatchingCandidates() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.candidates) > 0
}

// RangeCandidates calls fn for every cached LeaseCandidate; none while they are not watched.
// fn must not modify or retain the record's fields.
func (l *Cache) RangeCandidates(fn func(*lock.Candidate)) {
	l.mu.RLock()
	candidates := l.candidates
	l.mu.RUnlock()
	rangeStores(candidates, fn)
}

// Start starts watching, and retries a candidate discovery that was throttled at start; the
// reflectors and the retry stop when ctx is done.
func (l *Cache) Start(ctx context.Context) {
	for _, s := range l.allScopes() {
		l.wg.Go(func() { s.run(ctx) })
	}
	if namespaces := l.rediscover; namespaces != nil {
		l.wg.Go(func() { l.rediscoverCandidates(ctx, namespaces) })
	}
}

// allScopes returns the scopes added so far; candidate discovery may add more after Start.
func (l *Cache) allScopes() []runner {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.scopes[:len(l.scopes):len(l.scopes)]
}

// Shutdown waits for the reflectors to end after ctx passed to Start is done.
func (l *Cache) Shutdown() { l.wg.Wait() }

// WaitForCacheSync blocks until every scope has synced; the error says why it stopped early.
func (l *Cache) WaitForCacheSync(ctx context.Context) error {
	for _, s := range l.allScopes() {
		if !s.waitSynced(ctx) {
			return fmt.Errorf("lease cache not synced: %w", context.Cause(ctx))
		}
	}
	return nil
}

// HasSynced implements View.
func (l *Cache) HasSynced() bool {
	for _, s := range l.allScopes() {
		if !s.HasSynced() {
			return false
		}
	}
	return true
}

// Range implements View.
func (l *Cache) Range(fn func(*lock.Lease)) { rangeStores(l.locks, fn) }

// Snapshot implements Ordered.
func (l *Cache) Snapshot(nodes func(*lock.Lease) bool) Snapshot { return takeSnapshot(l.locks, nodes) }

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

// JudgedAt implements View.
func (l *Cache) JudgedAt(now time.Time) time.Time { return l.health.JudgedAt(now) }

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
