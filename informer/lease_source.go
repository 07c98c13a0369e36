package informer

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/lease-exporter/lease-exporter/lock"
)

// leaseSource is the source of coordination.k8s.io/v1 Leases, typed and in protobuf.
type leaseSource struct{}

var _ source[*lock.Lease] = leaseSource{}

// resource is KindLease's: sourceOf gives every non-annotation kind this source, which
// needs nothing more than the typed client.
func (leaseSource) resource() string { return lock.KindLease.QualifiedResource() }

func (leaseSource) object() runtime.Object { return &coordinationv1.Lease{} }

func (leaseSource) list(ctx context.Context, c Clients, namespace string, opts metav1.ListOptions, keep keepFunc) (runtime.Object, error) {
	list, err := c.List.CoordinationV1().Leases(namespace).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	if keep != nil {
		list.Items = keepItems(list.Items, func(l *coordinationv1.Lease) bool { return keep(l.Namespace, l.Name) })
	}
	return list, nil
}

func (leaseSource) watch(ctx context.Context, c Clients, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	return c.Watch.CoordinationV1().Leases(namespace).Watch(ctx, opts)
}

func (leaseSource) decode(obj any) (*lock.Lease, bool) {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return nil, false
	}
	return lock.Project(l), true
}

// orderings: scrapes walk locks in their families' orders (lock.Order).
func (leaseSource) orderings() []*ordering[*lock.Lease] { return lockOrderings() }
