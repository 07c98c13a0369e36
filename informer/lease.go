package informer

import (
	"strconv"
	"strings"
	"unicode/utf8"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Class says what a Lease is used for; dashboards and alerts treat the classes differently.
type Class uint8

// The classes, in the order lease_exporter_leases reports them.
const (
	ClassLeaderElection Class = iota
	ClassNodeHeartbeat
	ClassAPIServerIdentity
)

// NumClasses is the number of classes.
const NumClasses = 3

// Classes lists every Class, so the collector can report zero counts too.
var Classes = [NumClasses]Class{ClassLeaderElection, ClassNodeHeartbeat, ClassAPIServerIdentity}

// String returns the value of the class label.
func (c Class) String() string {
	switch c {
	case ClassNodeHeartbeat:
		return "node-heartbeat"
	case ClassAPIServerIdentity:
		return "apiserver-identity"
	default:
		return "leader-election"
	}
}

const (
	nodeLeaseNamespace     = "kube-node-lease"
	apiserverIdentityLabel = "apiserver.kubernetes.io/identity"
)

// classify decides the class from the fields the transform is about to drop.
func classify(l *coordinationv1.Lease) Class {
	if l.Namespace == nodeLeaseNamespace {
		return ClassNodeHeartbeat
	}
	if _, ok := l.Labels[apiserverIdentityLabel]; ok {
		return ClassAPIServerIdentity
	}
	return ClassLeaderElection
}

// Lease is the exporter's compact, immutable projection of a coordination.k8s.io/v1 Lease:
// only what the collector reads, plus what the exporter itself observed on the watch.
// Records are shared with concurrent scrapes and must never be modified once cached.
type Lease struct {
	// key is the store key "namespace/name"; Namespace and Name slice it.
	key string
	// Holder is spec.holderIdentity, "" when nil or released.
	Holder string
	// rare holds fields that nearly every Lease lacks; nil then.
	rare *rareFields
	// UID identifies the incarnation: a deleted and recreated Lease has a new one.
	UID uid
	// rv is metadata.resourceVersion; the API server's are decimal etcd revisions.
	rv uint64

	// RenewTime and AcquireTime are Unix microseconds, valid only when HasRenewTime/HasAcquireTime.
	RenewTime, AcquireTime int64
	// Created is metadata.creationTimestamp in Unix seconds.
	Created int64
	// FirstSeen is when this exporter first saw this incarnation (UID) of the Lease, Unix µs.
	FirstSeen int64
	// ObservedRenewTime is the exporter's clock when RenewTime last changed, Unix µs; 0 if never set.
	ObservedRenewTime int64

	DurationSeconds int32
	Transitions     int32
	// ObservedHolderChanges counts changes of Holder seen on the watch since FirstSeen.
	ObservedHolderChanges uint32

	nameAt                                                    uint16
	HasRenewTime, HasAcquireTime, HasDuration, HasTransitions bool
	Class                                                     Class
}

// rareFields are the coordinated leader election fields, and a resource version that is not
// a decimal number (never from a real API server, but the API calls them opaque).
type rareFields struct{ strategy, preferredHolder, resourceVersion string }

// Namespace is metadata.namespace.
func (l *Lease) Namespace() string { return l.key[:l.nameAt-1] }

// Name is metadata.name.
func (l *Lease) Name() string { return l.key[l.nameAt:] }

// ResourceVersion is metadata.resourceVersion.
func (l *Lease) ResourceVersion() string {
	if l.rare != nil && l.rare.resourceVersion != "" {
		return l.rare.resourceVersion
	}
	if l.rv == 0 {
		return ""
	}
	return strconv.FormatUint(l.rv, 10)
}

// sameVersion reports whether a and b carry the same non-empty resource version, without
// formatting it: the store asks on every event.
func (l *Lease) sameVersion(o *Lease) bool {
	if l.rare != nil && l.rare.resourceVersion != "" || o.rare != nil && o.rare.resourceVersion != "" {
		return l.ResourceVersion() != "" && l.ResourceVersion() == o.ResourceVersion()
	}
	return l.rv != 0 && l.rv == o.rv
}

// Strategy is spec.strategy (coordinated leader election), "" when unset.
func (l *Lease) Strategy() string {
	if l.rare == nil {
		return ""
	}
	return l.rare.strategy
}

// PreferredHolder is spec.preferredHolder (coordinated leader election), "" when unset.
func (l *Lease) PreferredHolder() string {
	if l.rare == nil {
		return ""
	}
	return l.rare.preferredHolder
}

// Expired reports whether the Lease is expired at time at (Unix µs), judged the way the
// API server's lease garbage collector judges it.
func (l *Lease) Expired(at int64) bool {
	if !l.HasRenewTime || !l.HasDuration {
		return true
	}
	return l.RenewTime+int64(l.DurationSeconds)*1e6 < at
}

// Held reports whether the Lease has a holder and is not expired at time at (Unix µs).
func (l *Lease) Held(at int64) bool { return l.Holder != "" && !l.Expired(at) }

// Project copies what the exporter reads out of a full Lease; everything else
// (managedFields, labels, annotations, owner references) is left for the garbage collector.
// It is the informer's transform minus the observed state, exported for tests that build
// views by hand. Memory per Lease is the budget that matters at 100k Leases, so the record is
// packed: namespace and name slice one key string, a holder equal to the name (kubelets)
// reuses it, the UID and resource version are numbers, and rare fields sit behind a pointer.
func Project(in *coordinationv1.Lease) *Lease {
	ns, name := validUTF8(in.Namespace), validUTF8(in.Name)
	key := ns + "/" + name
	out := &Lease{
		key:     key,
		nameAt:  uint16(len(ns) + 1),
		UID:     parseUID(in.UID),
		Class:   classify(in),
		Created: in.CreationTimestamp.Unix(),
	}
	var rare rareFields
	if rv, err := strconv.ParseUint(in.ResourceVersion, 10, 64); err == nil {
		out.rv = rv
	} else {
		rare.resourceVersion = in.ResourceVersion
	}
	s := &in.Spec
	out.Holder = validUTF8(deref(s.HolderIdentity))
	if out.Holder == out.Name() {
		out.Holder = out.Name()
	}
	rare.strategy, rare.preferredHolder = validUTF8(string(deref(s.Strategy))), validUTF8(deref(s.PreferredHolder))
	if rare != (rareFields{}) {
		out.rare = &rare
	}
	if s.RenewTime != nil {
		out.RenewTime, out.HasRenewTime = s.RenewTime.UnixMicro(), true
	}
	if s.AcquireTime != nil {
		out.AcquireTime, out.HasAcquireTime = s.AcquireTime.UnixMicro(), true
	}
	if s.LeaseDurationSeconds != nil {
		out.DurationSeconds, out.HasDuration = *s.LeaseDurationSeconds, true
	}
	if s.LeaseTransitions != nil {
		out.Transitions, out.HasTransitions = *s.LeaseTransitions, true
	}
	return out
}

// validUTF8 replaces invalid UTF-8, which Prometheus label values cannot carry. The API
// server validates names, but holder identities are free text that any client writes.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func deref[T ~string](p *T) T {
	if p == nil {
		return ""
	}
	return *p
}

// GetObjectMeta lets client-go's key functions and resource-version checks read the record
// (meta.Accessor accepts an ObjectMetaAccessor), so the cache can hold it instead of a Lease.
// It reports the whole key "namespace/name" as the name and no namespace: MetaNamespaceKeyFunc
// then returns the record's own key string instead of allocating a copy for the store.
func (l *Lease) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: l.key, UID: types.UID(l.UID.String()), ResourceVersion: l.ResourceVersion()}
}

// GetObjectKind is part of runtime.Object; the record carries no type information.
func (l *Lease) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject is part of runtime.Object; the record holds no pointers, so a copy is a deep copy.
func (l *Lease) DeepCopyObject() runtime.Object {
	c := *l
	return &c
}

var _ runtime.Object = (*Lease)(nil)
