package main

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/lease-exporter/lease-exporter/lock"
)

// source reads locks from the API server as the exporter does: Leases whole, ConfigMap and
// Endpoints locks metadata-only (their leader annotation is all a lock is), a page at a time.
type source struct {
	// cfg is the client configuration, for describe's port-forward; nil in tests.
	cfg    *rest.Config
	client kubernetes.Interface
	meta   metadata.Interface
	clock  *serverClock
	chunk  int64
	// noStream pages every list (a test of the fallback); silence, when set, is the
	// streamed list's streamSilence (a test's).
	noStream bool
	silence  time.Duration
}

// newSource connects with kubectl's configuration (--kubeconfig, --context, ...), reading
// the API server's clock from every response.
func newSource(o *options) (*source, error) {
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	clock := newServerClock(time.Now)
	cfg.Wrap(clock.wrap)
	cfg.UserAgent = "kubectl-lease"
	// Warnings (a deprecated API version) read as kubectl prints them, once each.
	cfg.WarningHandler = rest.NewWarningWriter(o.streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &source{cfg: cfg, client: client, meta: meta, clock: clock, chunk: o.chunkSize}, nil
}

// list lists the locks of kind k in namespace ns ("": all) matching selector, calling page
// with each page's locks as it arrives, and returns the list's resource version (to watch
// from). An object of an annotation kind without the leader annotation is no lock and is
// skipped, as the exporter skips it.
//
// It streams the list as the exporter's informer does (a watch that sends the initial
// objects, served from the API server's watch cache), and pages through it with continue
// tokens where the API server does not stream lists. Streamed, 100k Leases arrive in a few
// seconds; paged, each page of a large list costs the API server a pass of its own.
func (s *source) list(ctx context.Context, k lock.Kind, ns, selector string, page func([]*lock.Lease) error) (string, error) {
	if !s.noStream {
		rv, streamed, err := s.stream(ctx, k, ns, selector, page)
		if streamed || err != nil {
			return rv, err
		}
	}
	return s.listPages(ctx, k, ns, selector, page)
}

// listPages lists with continue tokens, s.chunk objects a request.
func (s *source) listPages(ctx context.Context, k lock.Kind, ns, selector string, page func([]*lock.Lease) error) (string, error) {
	opts := metav1.ListOptions{LabelSelector: selector, Limit: s.chunk}
	for {
		locks, meta, err := s.listPage(ctx, k, ns, opts)
		if err != nil {
			return "", lockError("list", k, ns, "", err)
		}
		if err := page(locks); err != nil {
			return "", err
		}
		if meta.Continue == "" {
			return meta.ResourceVersion, nil
		}
		opts.Continue = meta.Continue
	}
}

func (s *source) listPage(ctx context.Context, k lock.Kind, ns string, opts metav1.ListOptions) ([]*lock.Lease, metav1.ListMeta, error) {
	if !k.Annotation() {
		list, err := s.client.CoordinationV1().Leases(ns).List(ctx, opts)
		if err != nil {
			return nil, metav1.ListMeta{}, err
		}
		out := make([]*lock.Lease, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, lock.Project(&list.Items[i]))
		}
		return out, list.ListMeta, nil
	}
	list, err := s.meta.Resource(k.GVR()).Namespace(ns).List(ctx, opts)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	var out []*lock.Lease
	for i := range list.Items {
		if l, ok := lock.ProjectAnnotationLock(&list.Items[i].ObjectMeta, k); ok {
			out = append(out, l)
		}
	}
	return out, list.ListMeta, nil
}

// get reads the lock ns/name of kind k; found is false when there is no such object, or it
// carries no leader annotation.
func (s *source) get(ctx context.Context, k lock.Kind, ns, name string) (l *lock.Lease, found bool, err error) {
	if !k.Annotation() {
		obj, err := s.client.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, false, err
		}
		return lock.Project(obj), true, nil
	}
	obj, err := s.meta.Resource(k.GVR()).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	l, found = lock.ProjectAnnotationLock(&obj.ObjectMeta, k)
	return l, found, nil
}
