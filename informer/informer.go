// Package informer owns everything about talking to the API server: it lists and watches
// lock objects (Leases) with client-go's reflector, keeps a compact cache of them, records
// what it observes on the watch, and hands the collector a read-only View.
//
// The name says the role (it informs the exporter of the cluster's locks), not the
// implementation: this is deliberately not client-go's SharedIndexInformer. A reflector
// writes straight into the package's own store of 128-byte records, with no FIFO, indexer
// or event handlers: their hand-offs across goroutines cost 32 against 24 µs of CPU per
// renewal at the same batching (docs/benchmarks.md, "How an update reaches the cache").
//
// Every kind of object comes from a source (source.go: list, watch, decode); per source and
// watched namespace, a scope (scope.go) runs one reflector into one store (store.go), which
// passes every event through the records' observation (lock.Observation: the records, their
// decoding, history and judgement are package lock's). Health (health.go) judges the
// whole view from the scopes' reports. docs/architecture.md draws the picture.
package informer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
)

// View is what the collector may see of the cache: read-only records, whether the cache has
// synced, and how current it is.
type View interface {
	// HasSynced reports whether the initial list of every watched namespace is in the cache.
	HasSynced() bool
	// Range calls fn for every cached Lease. fn must not modify or retain the record's fields.
	Range(fn func(*lock.Lease))
	// JudgedAt returns when its locks are judged at wall time now: now while the view is
	// current, otherwise the moment it went stale (the latest time at which the cache is
	// known to match the API server), so a broken watch freezes the judgement where the view
	// was last known to be true instead of letting every lock expire.
	JudgedAt(now time.Time) time.Time
}

// Cache watches lock objects (every kind of lock, and the LeaseCandidates of coordinated
// elections) and implements CoordinatedView.
type Cache struct {
	clients Clients
	// startup are the clients of the start-up checks: clients, but with New's a 429 is
	// returned at once (startupConfig).
	startup Clients
	host    string
	scopes  []runner              // every scope of every source
	locks   []*store[*lock.Lease] // the stores of the lock sources' scopes, which Range reads
	// mu guards scopes and candidates, to which a candidate discovery retried after Start
	// (rediscoverCandidates) adds.
	mu sync.RWMutex
	// candidates are the stores of the LeaseCandidate scopes, empty until DiscoverCandidates
	// (or, after a throttled start, rediscoverCandidates) finds the API served and readable.
	candidates []*store[*lock.Candidate]
	// rediscover are the namespaces whose candidate discovery was throttled at start, which
	// Start retries; nil if none.
	rediscover []string
	opts       Options
	logger     *slog.Logger
	health     *health
	// deleted counts the locks that went and keeps their tombstones (DeletionView).
	deleted *deletions
	wg      sync.WaitGroup
}

var (
	_ CoordinatedView = (*Cache)(nil)
	_ DeletionView    = (*Cache)(nil)
)

// CandidateView is what the collector may see of the LeaseCandidates (coordinated leader
// election). It is separate from View because most views have none.
type CandidateView interface {
	// WatchingCandidates reports whether LeaseCandidates are watched at all: without, no
	// candidates says nothing about the cluster.
	WatchingCandidates() bool
	// RangeCandidates calls fn for every cached LeaseCandidate. fn must not modify or retain
	// the record's fields.
	RangeCandidates(fn func(*lock.Candidate))
}

// CoordinatedView is a View with its LeaseCandidates: what the candidate collector reads,
// the Leases of coordinated elections and their candidates from one cache.
type CoordinatedView interface {
	View
	CandidateView
}

// runner is what Cache needs of a scope, whatever record type it caches.
type runner interface {
	run(ctx context.Context)
	waitSynced(ctx context.Context) bool
	HasSynced() bool
}

// New builds the informer from the API server's client configuration: lists use cfg with
// every 429 answer reported (observeThrottling), watches a copy of that whose reads are
// batched by opts.WatchBatch (see watchConfig), the start-up checks a copy whose 429s come
// back at once (startupConfig); the same
// two configurations give the metadata-only clients of annotation locks. It hands them to
// NewForClients, the one constructor. Nothing talks to the API server until CheckReachable
// or Start.
func New(cfg *rest.Config, opts Options, logger *slog.Logger, reg prometheus.Registerer) (*Cache, error) {
	if err := opts.checkLocks(); err != nil {
		return nil, err // before any client is built; NewForClients checks it for tests too
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The watch connections ask the cache's health whether a streaming list is still
	// replaying (see batchingConn); they are dialled only once Start runs, after l is set.
	var l *Cache
	// One handler for every client, so each distinct warning is logged once in all.
	cfg = withWarnings(cfg, &onceWarnings{logger: logger})
	startup := startupConfig(cfg)
	cfg = observeThrottling(cfg, func(resource string, err error) { l.health.throttled(resource, err) })
	watchCfg := watchConfig(cfg, opts.WatchBatch, func() bool { return l.health.inInitialStream() })
	var c Clients
	var err error
	if c.List, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	if c.Watch, err = kubernetes.NewForConfig(watchCfg); err != nil {
		return nil, fmt.Errorf("build watch client: %w", err)
	}
	if c.MetaList, err = metadata.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("build metadata client: %w", err)
	}
	if c.MetaWatch, err = metadata.NewForConfig(watchCfg); err != nil {
		return nil, fmt.Errorf("build metadata watch client: %w", err)
	}
	if l, err = NewForClients(c, opts, logger, reg); err != nil {
		return nil, err
	}
	if l.startup.List, err = kubernetes.NewForConfig(startup); err != nil {
		return nil, fmt.Errorf("build start-up client: %w", err)
	}
	l.host = cfg.Host
	return l, nil
}

// NewForClients builds the informer over clients that are already built: New's, or a test's
// fake clientsets (one fake serves as List and Watch; annotation locks also need MetaList and
// MetaWatch, without which their scopes fail). Every Cache is built here, so a test's goes
// through the product's constructor.
func NewForClients(c Clients, opts Options, logger *slog.Logger, reg prometheus.Registerer) (*Cache, error) {
	if err := opts.checkLocks(); err != nil {
		return nil, err
	}
	l := newCache(opts, logger, reg)
	l.addSources(c, opts)
	return l, nil
}

func newCache(opts Options, logger *slog.Logger, reg prometheus.Registerer) *Cache {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := newMetrics(reg)
	return &Cache{health: newHealth(logger, m, opts.now()), deleted: newDeletions(opts.History, opts.Observer, opts.now(), m),
		opts: opts, logger: logger}
}

// addSources builds the scopes of every source: one per lock kind in opts.Locks, each
// built as its row of the kinds table says (sourceOf). A kind with its own record type gets its own stores
// the same way (DiscoverCandidates).
func (l *Cache) addSources(c Clients, opts Options) {
	l.clients, l.startup = c, c
	for _, k := range opts.locks() {
		l.addLocks(sourceOf(k), opts)
		if k.Annotation() {
			l.health.metrics.countParseErrors(k)
		}
	}
}

// sourceOf builds the source of a lock kind from its row of the kinds table (lock.Kind): an
// annotation lock's object is read metadata-only (annotationSource), a Lease whole.
func sourceOf(k lock.Kind) source[*lock.Lease] {
	if k.Annotation() {
		return newAnnotationSource(k, k.GVR())
	}
	return leaseSource{}
}

// addLocks adds the scopes of a lock source, whose records are Leases.
func (l *Cache) addLocks(src source[*lock.Lease], opts Options) {
	namespaces := opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	observe := lock.Observation(opts.History)
	observeLock := func(prev, next *lock.Lease, now int64, live bool) *lock.Lease {
		t := observe(prev, next, now, live)
		if t.Kind == lock.TransitionFirstSight {
			l.deleted.firstSight(t.Rec)
		}
		if opts.Observer != nil {
			opts.Observer.Observed(t)
		}
		return l.reportProblems(prev, t.Rec)
	}
	for _, s := range newScopes(src, observeLock, l.clients, namespaces, opts, opts.now(), l.health.metrics, l.health) {
		s.superseded = l.deleted.superseded
		l.scopes = append(l.scopes, s)
		l.locks = append(l.locks, s.store)
	}
}

// reportProblems runs after observe (and the history) for every lock kind: rec, the record
// about to be cached, is reported if it is a new version of a lock whose leader record could
// not be read in full: each unreadable field is counted, and the object is logged once, when
// it is first seen so (not on every renewal of the same broken record). Reflectors of several
// scopes call it concurrently.
func (l *Cache) reportProblems(prev, rec *lock.Lease) *lock.Lease {
	if rec == prev {
		return rec // the same version: already reported
	}
	problems := rec.RecordProblems()
	if len(problems) == 0 {
		return rec
	}
	for _, p := range problems {
		l.health.metrics.parseErrors.WithLabelValues(rec.Kind().String(), string(p.Reason)).Inc()
	}
	if prev == nil || prev.UID != rec.UID || prev.RecordProblems() == nil {
		l.logger.Warn("lock's leader record only partly readable; exporting what could be read",
			"kind", rec.Kind().String(), "namespace", rec.Namespace(), "name", rec.Name(),
			"annotation", leaderrecord.Annotation, "problems", lock.DescribeProblems(problems))
	}
	return rec
}
