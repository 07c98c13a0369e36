package main

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// The plugin reads the cluster with the exporter's own informer: every lock kind's source,
// LeaseCandidates in the version its discovery finds, client-go's reflector (streaming or
// paged lists, resumed and relisted) and the stores' observation with their replay rule, so a
// record, and what -w calls live, is what the exporter's would be. Only the clock is the
// plugin's: the API server's, read from its responses.

// source is the cluster as the plugin reads it.
type source struct {
	cfg     *rest.Config // for describe's port-forward; nil in tests
	clients informer.Clients
	clock   *serverClock
}

// newSource connects with kubectl's configuration (--kubeconfig, --context, ...).
func newSource(o *options) (*source, error) {
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	clock := newServerClock(time.Now)
	cfg.Wrap(clock.wrap)
	cfg.UserAgent = "kubectl-lease"
	informer.Protobuf(cfg)
	// Warnings (a deprecated API version) as kubectl prints them, once each.
	cfg.WarningHandler = rest.NewWarningWriter(o.streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &source{cfg: cfg, clients: informer.Clients{List: client, Watch: client, MetaList: meta, MetaWatch: meta}, clock: clock}, nil
}

// readOptions say what to read: the lock kinds in namespace ns ("" for all) matching
// selector, whether LeaseCandidates too, and who is told of every change (-w).
type readOptions struct {
	kinds        []lock.Kind
	ns, selector string
	candidates   bool
	observer     informer.Observer
}

// read starts the informer and returns once every initial list is cached; it runs, watching,
// until stop. A failed initial list ends the read with what is wrong, where the reflector
// would retry it for ever; after it, failed receives a watch's refusal (RBAC, credentials),
// which -w ends on: the informer retries anything else, as the exporter's does.
func (s *source) read(ctx context.Context, r readOptions) (c *informer.Cache, stop func(), failed <-chan error, err error) {
	refused := make(chan error, 1)
	opts := informer.Options{Locks: r.kinds, LeaseSelector: r.selector, NoCandidates: !r.candidates, Observer: r.observer,
		Now: func() time.Time { at, _, _ := s.clock.now(); return at },
		Failed: func(resource, ns string, listed bool, err error) {
			k := slices.IndexFunc(lock.Kinds, func(k lock.Kind) bool { return k.QualifiedResource() == resource })
			if k < 0 || listed && (r.observer == nil || !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err)) {
				return
			}
			verb := "list"
			if listed {
				verb = "watch"
			}
			if status := (*apierrors.StatusError)(nil); errors.As(err, &status) {
				err = status // the API server's words, not the reflector's wrapping
			}
			select {
			case refused <- lockError(verb, lock.Kinds[k], ns, err):
			default:
			}
		}}
	if r.ns != "" {
		opts.Namespaces = []string{r.ns}
	}
	// cache, not the named result c, which the returns below clear while WaitForCacheSync's
	// goroutine may still read it.
	cache, err := informer.NewForClients(s.clients, opts, nil, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cache.DiscoverCandidates(ctx, 10*time.Second); err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	cache.Start(ctx)
	stop = func() { cancel(); cache.Shutdown() }
	synced := make(chan error, 1)
	go func() { synced <- cache.WaitForCacheSync(ctx) }()
	select {
	case err = <-synced:
	case err = <-refused:
	}
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	return cache, stop, refused, nil
}

// records returns c's locks in the list's order: by kind (--locks' order), namespace, name.
func records(c *informer.Cache, kinds []lock.Kind) []*lock.Lease {
	var out []*lock.Lease
	c.Range(func(l *lock.Lease) { out = append(out, l) })
	slices.SortFunc(out, func(a, b *lock.Lease) int {
		return cmp.Or(slices.Index(kinds, a.Kind())-slices.Index(kinds, b.Kind()),
			strings.Compare(a.Namespace(), b.Namespace()), strings.Compare(a.Name(), b.Name()))
	})
	return out
}
