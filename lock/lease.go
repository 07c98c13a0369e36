package lock

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
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

// classNamed returns the Class whose label value (its String) is name.
func classNamed(name string) (Class, bool) {
	for _, c := range Classes {
		if c.String() == name {
			return c, true
		}
	}
	return 0, false
}

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

// Lease is the exporter's compact, immutable record of one lock: the projection of a
// coordination.k8s.io/v1 Lease (every lock kind's source decodes into it), only what the
// collector reads, plus what the exporter itself observed on the watch. Records are shared
// with concurrent scrapes and must never be modified once cached.
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
	// Created is metadata.creationTimestamp in Unix seconds (0 before 1970; uint32 lasts until
	// 2106), which leaves room beside it for ObservedRenewals in the 128-byte record.
	Created uint32
	// ObservedRenewals counts the renewals the exporter saw since FirstSeen: records that moved
	// renewTime forward under the same holder (see observeLock).
	ObservedRenewals uint32
	// FirstSeen is when this exporter first saw this incarnation (UID) of the Lease, Unix µs.
	FirstSeen int64
	// ObservedRenewTime is when, by the exporter's clock, the Lease's record (holder or
	// renewTime) last changed, Unix µs; 0 without a renewTime. Held judges from it (see observeLock).
	ObservedRenewTime int64

	DurationSeconds int32
	Transitions     int32
	// ObservedHolderChanges counts holder changes since FirstSeen (see observeLock).
	ObservedHolderChanges uint32
	// skewMillis is the holder's clock minus the exporter's, from the last renewal seen live
	// on the watch, in milliseconds; noSkew until one was seen. See ClockSkew.
	skewMillis int32

	nameAt                                                    uint16
	HasRenewTime, HasAcquireTime, HasDuration, HasTransitions bool
	Class                                                     Class
	// bits holds the lock's Kind (kindMask), ownedBySameNameNode and plainKey.
	bits uint8
}

const (
	kindMask = 0x3
	// ownedBySameNameNode marks the kubelet's node Lease, owned by the Node of its own name:
	// 90% of the Leases of a large cluster, whose owner then costs no memory.
	ownedBySameNameNode = 0x4
	// plainKey marks a namespace and name that the text format writes as they are (no
	// backslash, double quote or newline to escape): every name the API server validates.
	plainKey = 0x8
)

// Kind is the kind of object the lock lives in.
func (l *Lease) Kind() Kind { return Kind(l.bits & kindMask) }

// rareFields are the coordinated leader election fields, the owner (other than a node Lease's
// own Node), what could not be read of an annotation lock's record, a resource version that
// is not a decimal number (never from a real API server, but the API calls them opaque), and
// the election history, which only the classes that keep one have (leader-election locks by
// default, 10% of a large cluster's Leases).
type rareFields struct {
	strategy, preferredHolder, ownerKind, ownerName, resourceVersion string
	// problems are the fields of an annotation lock's record that could not be read.
	problems leaderrecord.ProblemSet
	history  *History
}

// Owner is the kind and name of the object's controller owner reference (or of its first
// owner reference without a controller), "" when it has none.
func (l *Lease) Owner() (kind, name string) {
	if l.bits&ownedBySameNameNode != 0 {
		return "Node", l.Name()
	}
	if l.rare == nil {
		return "", ""
	}
	return l.rare.ownerKind, l.rare.ownerName
}

// PlainKey reports whether Namespace and Name hold nothing the Prometheus text format
// escapes in a label value, so a writer can copy them as they are. It is decided once, when
// the record is built, instead of on each of a scrape's series.
func (l *Lease) PlainKey() bool { return l.bits&plainKey != 0 }

// Namespace is metadata.namespace.
func (l *Lease) Namespace() string { return l.key[:l.nameAt-1] }

// Name is metadata.name.
func (l *Lease) Name() string { return l.key[l.nameAt:] }

// StoreKey implements record: the key string itself, no allocation.
func (l *Lease) StoreKey() string { return l.key }

// ShardKey implements record: a lock is sharded by its own namespace and name.
func (l *Lease) ShardKey() (namespace, name string) { return l.Namespace(), l.Name() }

// resourceVersion is metadata.resourceVersion.
func (l *Lease) resourceVersion() string {
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
		return l.resourceVersion() != "" && l.resourceVersion() == o.resourceVersion()
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

// noSkew marks a record whose holder's clock has not been measured yet.
const noSkew = math.MinInt32

// ClockSkew returns how far the holder's clock runs ahead of the exporter's (negative:
// behind), in milliseconds, measured from the last renewal the exporter saw live on its
// watch; ok is false until it has seen one.
func (l *Lease) ClockSkew() (millis int32, ok bool) { return l.skewMillis, l.skewMillis != noSkew }

// Project copies what the exporter reads out of a full Lease; everything else
// (managedFields, labels, annotations, owner references) is left for the garbage collector.
// It is the Lease source's decoder (informer's leaseSource.decode), without the observed
// state that Observation adds. Memory per Lease is the budget that matters at 100k Leases, so
// the record is packed: namespace and name slice one key string, a holder equal to the name
// (kubelets) reuses it, the UID and resource version are numbers, and rare fields sit behind
// a pointer.
func Project(in *coordinationv1.Lease) *Lease {
	out, rare := projectMeta(&in.ObjectMeta)
	out.Class = classify(in)
	s := &in.Spec
	out.Holder = validUTF8(deref(s.HolderIdentity))
	if out.Holder == out.Name() {
		out.Holder = out.Name()
	}
	rare.strategy, rare.preferredHolder = validUTF8(string(deref(s.Strategy))), validUTF8(deref(s.PreferredHolder))
	out.setRare(rare)
	if s.RenewTime != nil {
		out.RenewTime, out.HasRenewTime = s.RenewTime.UnixMicro(), true
		// Until observe sets it, a record is judged by its own timestamp (hand-built views).
		out.ObservedRenewTime = out.RenewTime
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

// projectMeta starts the record of any lock object from its metadata: key, UID, resource
// version, creation and owner. The caller fills in the lock's fields and the rest of rare,
// then keeps it with setRare.
func projectMeta(m *metav1.ObjectMeta) (*Lease, rareFields) {
	ns, name := validUTF8(m.Namespace), validUTF8(m.Name)
	out := &Lease{
		key:        ns + "/" + name,
		nameAt:     uint16(len(ns) + 1),
		UID:        parseUID(m.UID),
		Created:    uint32(min(max(m.CreationTimestamp.Unix(), 0), math.MaxUint32)),
		skewMillis: noSkew,
	}
	if !strings.ContainsAny(out.key, "\\\"\n") {
		out.bits |= plainKey
	}
	var rare rareFields
	if rv, err := strconv.ParseUint(m.ResourceVersion, 10, 64); err == nil {
		out.rv = rv
	} else {
		rare.resourceVersion = m.ResourceVersion
	}
	if kind, name := owner(m.OwnerReferences); kind == "Node" && name == out.Name() {
		out.bits |= ownedBySameNameNode
	} else {
		rare.ownerKind, rare.ownerName = kind, name
	}
	return out, rare
}

// setRare keeps rare if it holds anything; only then is it allocated.
func (l *Lease) setRare(rare rareFields) {
	if rare != (rareFields{}) {
		l.rare = &rare
	}
}

// owner picks the controller owner reference, else the first: kube-state-metrics'
// kube_lease_owner shows the same, one owner per Lease.
func owner(refs []metav1.OwnerReference) (kind, name string) {
	if len(refs) == 0 {
		return "", ""
	}
	ref := refs[0]
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			ref = r
			break
		}
	}
	return validUTF8(ref.Kind), validUTF8(ref.Name)
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
	return &metav1.ObjectMeta{Name: l.key, UID: types.UID(l.UID.String()), ResourceVersion: l.resourceVersion()}
}

// GetObjectKind is part of runtime.Object; the record carries no type information.
func (l *Lease) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject is part of runtime.Object; the record holds no pointers, so a copy is a deep copy.
func (l *Lease) DeepCopyObject() runtime.Object {
	c := *l
	return &c
}

var _ runtime.Object = (*Lease)(nil)
