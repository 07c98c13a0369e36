package informer

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
)

// annotationSource is the source of one kind of annotation lock, ConfigMaps or Endpoints:
// listed and watched metadata-only (PartialObjectMetadata), so a ConfigMap's data never
// crosses the wire, and kept only when it carries the leader annotation. The API server
// cannot filter by annotation, so every object's metadata is received and dropped here.
type annotationSource struct {
	kind lock.Kind
	gvr  schema.GroupVersionResource
}

var _ source[*lock.Lease] = annotationSource{}

// newAnnotationSource is the source of every annotation lock kind (lockKinds).
func newAnnotationSource(k lock.Kind, gvr schema.GroupVersionResource) source[*lock.Lease] {
	return annotationSource{kind: k, gvr: gvr}
}

// errNoMetadataClient is a programming error: an annotation lock kind without a metadata client.
var errNoMetadataClient = errors.New("annotation locks need a metadata client")

func (s annotationSource) resource() string { return s.gvr.GroupResource().String() }

func (annotationSource) object() runtime.Object { return &metav1.PartialObjectMetadata{} }

func (s annotationSource) list(ctx context.Context, c Clients, namespace string, opts metav1.ListOptions, keep keepFunc) (runtime.Object, error) {
	if c.MetaList == nil {
		return nil, errNoMetadataClient
	}
	list, err := c.MetaList.Resource(s.gvr).Namespace(namespace).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	list.Items = keepItems(list.Items, func(o *metav1.PartialObjectMetadata) bool {
		_, lock := o.Annotations[leaderrecord.Annotation]
		return lock && (keep == nil || keep(o.Namespace, o.Name))
	})
	return list, nil
}

func (s annotationSource) watch(ctx context.Context, c Clients, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	if c.MetaWatch == nil {
		return nil, errNoMetadataClient
	}
	return c.MetaWatch.Resource(s.gvr).Namespace(namespace).Watch(ctx, opts)
}

func (s annotationSource) decode(obj any) (*lock.Lease, bool) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, false
	}
	return lock.ProjectAnnotationLock(&m.ObjectMeta, s.kind)
}

// orderings: scrapes walk locks in their families' orders (lock.Order).
func (annotationSource) orderings() []*ordering[*lock.Lease] { return lockOrderings() }
