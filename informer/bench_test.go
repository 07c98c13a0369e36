package informer

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// nodeLease builds a kubelet-like node Lease with managedFields, as the API server sends it.
func nodeLease(i int, renew time.Time) *coordinationv1.Lease {
	name := fmt.Sprintf("ip-10-%d-%d-%d.eu-west-1.compute.internal", i/65536%256, i/256%256, i%256)
	r := metav1.NewMicroTime(renew)
	d := int32(40)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "kube-node-lease", Name: name, UID: types.UID(fmt.Sprintf("0b5e8a52-4c0e-4f7e-9a55-%012d", i)),
			ResourceVersion: fmt.Sprint(1000000 + i), CreationTimestamp: metav1.NewTime(renew.Add(-time.Hour)),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: "x"}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: "Update", APIVersion: "coordination.k8s.io/v1",
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:ownerReferences":{".":{},"k:{\"uid\":\"x\"}":{}}},"f:spec":{"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:renewTime":{}}}`)}}},
		},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &d, RenewTime: &r},
	}
}

// BenchmarkTransform is the event path: one renewal of a cached node Lease.
func BenchmarkTransform(b *testing.B) {
	const n = 10000
	o := newObserver(time.Now)
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	o.store = store
	leases := make([]*coordinationv1.Lease, n)
	for i := range n {
		leases[i] = nodeLease(i, time.Now())
		rec, _ := o.transform(leases[i])
		_ = store.Add(rec)
		o.settled(rec)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		l := leases[i%n]
		l.ResourceVersion = fmt.Sprint(2000000 + i)
		r := metav1.NewMicroTime(time.Now())
		l.Spec.RenewTime = &r
		rec, _ := o.transform(l)
		_ = store.Update(rec)
		o.settled(rec)
	}
}

// TestLiveHeapPerLease reports the live heap the cache holds per node Lease. It asserts
// nothing about speed; it guards the memory design against a large regression.
func TestLiveHeapPerLease(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 100k Leases")
	}
	const n = 100000
	o := newObserver(time.Now)
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	o.store = store
	before := liveHeap()
	now := time.Now()
	for i := range n {
		rec, _ := o.transform(nodeLease(i, now))
		_ = store.Add(rec)
		o.settled(rec)
	}
	perLease := float64(liveHeap()-before) / n
	runtime.KeepAlive(store)
	t.Logf("live heap per cached node Lease: %.0f B", perLease)
	if perLease > 300 {
		t.Errorf("live heap per Lease %.0f B exceeds the 300 B budget (issue: memory per lease)", perLease)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
