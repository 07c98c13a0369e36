package lock

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Candidate is the exporter's compact, immutable record of one LeaseCandidate
// (coordination.k8s.io, coordinated leader election): a component's offer to lead the Lease
// named LeaseName in its namespace. Records are shared with concurrent scrapes and must never
// be modified once cached.
type Candidate struct {
	// key is the store key "namespace/name"; Namespace and Name slice it.
	key string
	// LeaseName is spec.leaseName, the Lease in the same namespace the candidate contends for.
	LeaseName string
	// BinaryVersion, EmulationVersion and Strategy are the spec's fields of the same names.
	BinaryVersion, EmulationVersion, Strategy string
	// RenewTime and PingTime are spec.renewTime (the candidate's clock) and spec.pingTime (the
	// API server's), Unix µs, valid only when HasRenewTime/HasPingTime.
	RenewTime, PingTime int64
	// ObservedRenewTime is when, by the exporter's clock, the candidate's renewTime last
	// changed, Unix µs; 0 without a renewTime. Fresh judges from it (see ObserveCandidate).
	ObservedRenewTime int64
	nameAt            uint16
	// HasRenewTime and HasPingTime say whether the spec has the field.
	HasRenewTime, HasPingTime bool
}

// Namespace is the LeaseCandidate's namespace, which is also its Lease's.
func (c *Candidate) Namespace() string { return c.key[:c.nameAt-1] }

// Name is the LeaseCandidate's name, the identity the component elects itself under: the
// API server writes it into the Lease's spec.preferredHolder.
func (c *Candidate) Name() string { return c.key[c.nameAt:] }

// StoreKey implements record.
func (c *Candidate) StoreKey() string { return c.key }

// ShardKey implements record: a candidate goes to the shard of the Lease it contends for, so
// one replica sees a Lease and all its candidates.
func (c *Candidate) ShardKey() (namespace, name string) { return c.Namespace(), c.LeaseName }

// ProjectCandidate builds the record from the fields every served version has in common.
func ProjectCandidate(meta *metav1.ObjectMeta, leaseName, binary, emulation, strategy string, renew, ping *metav1.MicroTime) *Candidate {
	c := &Candidate{
		key:       meta.Namespace + "/" + meta.Name,
		nameAt:    uint16(len(meta.Namespace) + 1),
		LeaseName: validUTF8(leaseName), BinaryVersion: validUTF8(binary),
		EmulationVersion: validUTF8(emulation), Strategy: validUTF8(strategy),
	}
	if renew != nil {
		c.RenewTime, c.HasRenewTime = renew.UnixMicro(), true
	}
	if ping != nil {
		c.PingTime, c.HasPingTime = ping.UnixMicro(), true
	}
	return c
}

// ObserveCandidate carries the observed renew time over from prev, as observeLock does for locks:
// a renewal seen live is observed when it arrives; one shown by a list or replay is placed at
// its renewTime, never later than now nor before the previous observation. It returns prev
// itself when nothing the collector reads changed, so the store skips the write.
func ObserveCandidate(prev, next *Candidate, now int64, live bool) *Candidate {
	switch {
	case !next.HasRenewTime:
		next.ObservedRenewTime = 0
	case prev != nil && prev.HasRenewTime && prev.RenewTime == next.RenewTime:
		next.ObservedRenewTime = prev.ObservedRenewTime
	case live:
		next.ObservedRenewTime = now
	default:
		at := min(next.RenewTime, now)
		if prev != nil {
			at = max(at, prev.ObservedRenewTime)
		}
		next.ObservedRenewTime = at
	}
	if prev != nil && *prev == *next {
		return prev
	}
	return next
}

// GetObjectMeta lets client-go's key functions read the record while a streaming list is
// collected; like Lease's, it reports the whole key as the name (see Lease.GetObjectMeta).
func (c *Candidate) GetObjectMeta() metav1.Object { return &metav1.ObjectMeta{Name: c.key} }

// GetObjectKind is part of runtime.Object; the record carries no type information.
func (c *Candidate) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject is part of runtime.Object; the record holds no pointers.
func (c *Candidate) DeepCopyObject() runtime.Object {
	cp := *c
	return &cp
}
