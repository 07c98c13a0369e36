package informer

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
)

// source is one kind of object the exporter watches (Leases, ConfigMap and Endpoints
// annotation locks), reduced to what differs
// between kinds: how to list and watch it, and how to decode it into the compact record R.
// Everything else is written once and shared by every source: the scopes (reflector, store,
// watch state), observation, server-side filters, sharding, freshness and self-metrics.
//
// A new lock kind implements source for its API object, typed or metadata-only, and is a row
// of the kinds table (lock/kinds.go), which addSources reads through sourceOf. A lock kind decodes into *Lease, so every
// observation passes through observe; a kind with another record type (LeaseCandidate) brings
// its record and observe function and gets its own stores from the same machinery.
type source[R record[R]] interface {
	// resource names what is listed and watched as RBAC does, e.g. "leases.coordination.k8s.io".
	resource() string
	// object returns an empty object of the type list items and watch events carry; the
	// reflector checks events against it.
	object() runtime.Object
	// list lists the objects in namespace ("" for all) through c.List. Items whose shard key
	// keep rejects (keep is nil when unsharded) and objects that are not of interest (a
	// ConfigMap without a leader annotation) are dropped before the reflector copies them.
	list(ctx context.Context, c Clients, namespace string, opts metav1.ListOptions, keep keepFunc) (runtime.Object, error)
	// watch watches namespace through c.Watch.
	watch(ctx context.Context, c Clients, namespace string, opts metav1.ListOptions) (watch.Interface, error)
	// decode projects an API object of the kind into its record, without the observed state;
	// false for any other value and for objects that are not of interest.
	decode(obj any) (R, bool)
	// orderings returns new, empty orderings for a store of R to keep (ordering.go), or
	// none.
	orderings() []*ordering[R]
}

// record is what a store caches: the compact, immutable projection of one API object. R is
// the record type itself. Records pass through the reflector's temporary store during a
// streaming list, so client-go's key functions must read them (ObjectMetaAccessor).
type record[R any] interface {
	comparable
	runtime.Object
	metav1.ObjectMetaAccessor
	// StoreKey is the record's key in its store, "namespace/name".
	StoreKey() string
	// ShardKey is what sharding hashes (see sharding.Of): a lock's own namespace and name.
	ShardKey() (namespace, name string)
}

// keepFunc decides from a shard key whether this replica exports an object; nil keeps all.
type keepFunc func(namespace, name string) bool

// Clients are the API clients every scope uses: lists through List (typed) or MetaList
// (metadata-only), watches through Watch or MetaWatch, whose reads New batches (see
// watchConfig). All are real or all fakes: the reflector asks List whether streaming lists
// are possible. A nil metadata client leaves the annotation locks unreadable (their scopes
// fail with a clear error); a test with one fake clientset passes it as List and Watch.
type Clients struct {
	List, Watch         kubernetes.Interface
	MetaList, MetaWatch metadata.Interface
}

// keepItems drops, in place, the items of a typed list that keep rejects.
func keepItems[T any](items []T, keep func(*T) bool) []T {
	kept := items[:0]
	for i := range items {
		if keep(&items[i]) {
			kept = append(kept, items[i])
		}
	}
	return kept
}
