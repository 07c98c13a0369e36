package lock

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is the kind of API object a lock lives in: a Lease, or the leader annotation of a
// ConfigMap or Endpoints object (client-go's and the Python client's older locks). It indexes
// lockKinds, which says everything else about it.
type Kind uint8

// The lock kinds, one per row of lockKinds.
const (
	KindLease Kind = iota
	KindConfigMap
	KindEndpoints
)

// DefaultKind is the kind meant wherever none is named: what is watched without --locks, the
// kind of an --expect entry without one, of a status page address without ?kind=, and what
// a Kind outside the table reads as. Kubernetes' own electors all use Leases.
const DefaultKind = KindLease

// DefaultKinds is what is watched when nothing else is asked for.
func DefaultKinds() []Kind { return []Kind{DefaultKind} }

// lockKind is one row of the lock kinds table: everything that differs between lock kinds.
// The --locks flag, the sources informer.New builds (a Lease source, or an annotation source
// for an annotation lock), the kind label, the self-metrics, the docs tests and the RBAC in
// deploy/ (hack/lockkinds, run by `make generate`) all read it, so a new lock kind is one row
// here and its decoder.
type lockKind struct {
	// apiKind is the API object's kind, the value of the kind label: "ConfigMap".
	apiKind string
	// gvr is what is listed and watched; its resource is the value --locks takes and what
	// RBAC grants list and watch on.
	gvr schema.GroupVersionResource
	// annotation: the lock is the leader annotation of an object of this kind, read
	// metadata-only, and may be only partly readable (lease_exporter_lock_parse_errors_total
	// counts what is not, from zero as soon as the kind is watched).
	annotation bool
}

var lockKinds = [...]lockKind{
	KindLease: {apiKind: "Lease", gvr: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}},
	KindConfigMap: {apiKind: "ConfigMap", gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		annotation: true},
	KindEndpoints: {apiKind: "Endpoints", gvr: schema.GroupVersionResource{Version: "v1", Resource: "endpoints"},
		annotation: true},
}

// A record keeps its kind in the bits kindMask covers: the table must fit.
var _ [kindMask + 1 - len(lockKinds)]struct{}

// Kinds lists every Kind, in table order.
var Kinds = func() []Kind {
	kinds := make([]Kind, len(lockKinds))
	for i := range kinds {
		kinds[i] = Kind(i)
	}
	return kinds
}()

// row returns the kind's row; a Kind outside the table (never set by a source) reads as the
// DefaultKind.
func (k Kind) row() *lockKind {
	if !k.Valid() {
		return &lockKinds[DefaultKind]
	}
	return &lockKinds[k]
}

// Valid reports whether k is a row of the kinds table (a Kind is an open number).
func (k Kind) Valid() bool { return int(k) < len(lockKinds) }

// GVR is what is listed and watched.
func (k Kind) GVR() schema.GroupVersionResource { return k.row().gvr }

// QualifiedResource names the resource as RBAC and the API server's errors do: "leases.coordination.k8s.io".
func (k Kind) QualifiedResource() string { return k.row().gvr.GroupResource().String() }

// String returns the value of the kind label: the API kind.
func (k Kind) String() string { return k.row().apiKind }

// Resource returns the kind's API resource: the plural RBAC grants and --locks names.
func (k Kind) Resource() string { return k.row().gvr.Resource }

// Annotation reports whether the kind's locks are the leader annotation of its objects, which
// the exporter reads metadata-only.
func (k Kind) Annotation() bool { return k.row().annotation }

// RBACRule is a PolicyRule of the exporter's ClusterRole or Roles.
type RBACRule struct {
	APIGroup, Resource string
	Verbs              []string
}

// RBACRule returns what the exporter needs to be granted to watch the kind: list and watch,
// what every scope's reflector does (never get: no single object is read). The exporter
// itself never asks; it is exported for hack/lockkinds, which generates deploy/'s RBAC from
// it (make generate), and for test/deploy, which checks the rendered rules against it.
func (k Kind) RBACRule() RBACRule {
	gvr := k.row().gvr
	return RBACRule{APIGroup: gvr.Group, Resource: gvr.Resource, Verbs: []string{"list", "watch"}}
}

// KindNamed returns the Kind whose API kind (its String, "ConfigMap") is name.
func KindNamed(name string) (Kind, bool) {
	for _, k := range Kinds {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}

// KindOfResource returns the Kind whose Resource is resource.
func KindOfResource(resource string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Resource() == resource {
			return k, true
		}
	}
	return 0, false
}
