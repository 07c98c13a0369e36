package informer

import (
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

// Classes lists every Class, so the collector can report zero counts too.
var Classes = []Class{ClassLeaderElection, ClassNodeHeartbeat, ClassAPIServerIdentity}

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
	Namespace, Name, UID, ResourceVersion string
	Class                                 Class

	// Holder is spec.holderIdentity, "" when nil or released.
	Holder, Strategy, PreferredHolder string

	// RenewTime and AcquireTime are Unix microseconds, valid only when HasRenewTime/HasAcquireTime.
	RenewTime, AcquireTime int64
	HasRenewTime           bool
	HasAcquireTime         bool
	DurationSeconds        int32
	HasDuration            bool
	Transitions            int32
	HasTransitions         bool
	// Created is metadata.creationTimestamp in Unix seconds.
	Created int64

	// FirstSeen is when this exporter first saw this incarnation (UID) of the Lease, Unix µs.
	FirstSeen int64
	// ObservedRenewTime is the exporter's clock when RenewTime last changed, Unix µs; 0 if never set.
	ObservedRenewTime int64
	// ObservedHolderChanges counts changes of Holder seen on the watch since FirstSeen.
	ObservedHolderChanges uint64
}

// key is the informer store key (MetaNamespaceKeyFunc) of the Lease.
func (l *Lease) key() string { return l.Namespace + "/" + l.Name }

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

// project copies what the exporter reads out of a full Lease; everything else
// (managedFields, labels, annotations, owner references) is left for the garbage collector.
func project(in *coordinationv1.Lease) *Lease {
	out := &Lease{
		Namespace:       in.Namespace,
		Name:            in.Name,
		UID:             string(in.UID),
		ResourceVersion: in.ResourceVersion,
		Class:           classify(in),
		Created:         in.CreationTimestamp.Unix(),
	}
	s := &in.Spec
	out.Holder = deref(s.HolderIdentity)
	out.Strategy = string(deref(s.Strategy))
	out.PreferredHolder = deref(s.PreferredHolder)
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

func deref[T ~string](p *T) T {
	if p == nil {
		return ""
	}
	return *p
}

// GetObjectMeta lets client-go's key functions and resource-version checks read the record
// (meta.Accessor accepts an ObjectMetaAccessor), so the cache can hold it instead of a Lease.
func (l *Lease) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: l.Namespace, Name: l.Name, UID: types.UID(l.UID), ResourceVersion: l.ResourceVersion}
}

// GetObjectKind is part of runtime.Object; the record carries no type information.
func (l *Lease) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject is part of runtime.Object; the record holds no pointers, so a copy is a deep copy.
func (l *Lease) DeepCopyObject() runtime.Object {
	c := *l
	return &c
}

var _ runtime.Object = (*Lease)(nil)
