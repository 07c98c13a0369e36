package informer

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/lease-exporter/lease-exporter/lock"
)

// BenchmarkDecodeLease and BenchmarkStoreUpdate split the CPU of one Lease renewal, which
// hack/bench measures end to end (watch stream to cache), into the parts paid in-process.

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

// benchStore is a Lease store as the informer builds it, with metrics, health and the
// deletions it reports to.
func benchStore() *store[*lock.Lease] {
	m := newMetrics(prometheus.NewRegistry())
	h := newHealth(slog.New(slog.DiscardHandler), m, time.Now)
	s := newScopes(leaseSource{}, observeLock, Clients{}, []string{""}, Options{}, time.Now, m, h)[0].store
	s.superseded = newDeletions(lock.DefaultHistory, nil, time.Now, m).superseded
	return s
}

// BenchmarkStoreUpdate is the event path after decoding: one renewal of a cached node Lease
// (project, observe, cache, keep its place in the exposition's orders, count), among 10k and
// 100k cached Leases, renewed in random order as the watch delivers them.
func BenchmarkStoreUpdate(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("leases=%d", n), func(b *testing.B) {
			s := benchStore()
			leases := make([]*coordinationv1.Lease, n)
			for i := range n {
				leases[i] = nodeLease(i, time.Now())
				_ = s.Add(leases[i])
			}
			order := rand.New(rand.NewPCG(1, 2)).Perm(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				l := leases[order[i%n]]
				l.ResourceVersion = fmt.Sprint(2000000 + i)
				r := metav1.NewMicroTime(time.Now())
				l.Spec.RenewTime = &r
				_ = s.Update(l)
			}
		})
	}
}

// TestLiveHeapPerLease reports the live heap the cache holds per node Lease. It asserts
// nothing about speed; it guards the memory design against a large regression.
func TestLiveHeapPerLease(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 100k Leases")
	}
	const n = 100000
	before := liveHeap()
	s := benchStore()
	now := time.Now()
	for i := range n {
		_ = s.Add(nodeLease(i, now))
	}
	perLease := float64(liveHeap()-before) / n
	runtime.KeepAlive(s)
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

// BenchmarkDecodeLease is the protobuf decoding of one kubelet-like Lease (with
// managedFields) as it arrives in a watch event, before the transform drops most of it.
func BenchmarkDecodeLease(b *testing.B) {
	info, ok := k8sruntime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), k8sruntime.ContentTypeProtobuf)
	if !ok {
		b.Fatal("no protobuf serializer")
	}
	l := nodeLease(1, time.Now())
	l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
	data, err := k8sruntime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, coordinationv1.SchemeGroupVersion), l)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := info.Serializer.Decode(data, nil, &coordinationv1.Lease{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInformerSync runs the whole informer (list through a fake clientset, reflector,
// store) over n node Leases and reports the time to sync and the live heap per Lease
// afterwards. TestLiveHeapPerLease measures only the store; the difference is what the rest
// of the pipeline keeps after the initial list.
func BenchmarkInformerSync(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			client := fake.NewClientset()
			now := time.Now()
			tracker := client.Tracker()
			for i := range n {
				if err := tracker.Add(nodeLease(i, now)); err != nil {
					b.Fatal(err)
				}
			}
			var perLease float64
			for b.Loop() {
				perLease = syncedHeapPerLease(b, client, n)
			}
			b.ReportMetric(perLease, "live-B/lease")
		})
	}
}

func syncedHeapPerLease(b *testing.B, client *fake.Clientset, n int) float64 {
	before := liveHeap()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := NewForClients(Clients{List: client, Watch: client}, Options{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	l.Start(ctx)
	if err := l.WaitForCacheSync(ctx); err != nil {
		b.Fatal(err)
	}
	count := 0
	l.Range(func(*lock.Lease) { count++ })
	if count != n {
		b.Fatalf("synced %d Leases, want %d", count, n)
	}
	after := liveHeap()
	runtime.KeepAlive(l)
	cancel()
	l.Shutdown()
	return float64(after-before) / float64(n)
}

// BenchmarkSnapshot is a scrape's one read of the cache (Cache.Snapshot), at 100k election
// locks and at 100k Leases nine in ten of them node heartbeats: take, the kept orders copied
// (before the scrape's first byte); and nodes, with the scan for the overdue node heartbeats
// (as the default wants; these are on time) that the first walk wanting node heartbeats
// makes. Each holds a store's read lock throughout, so its time is how long it holds up the
// watch's events.
func BenchmarkSnapshot(b *testing.B) {
	for _, c := range []struct {
		name  string
		nodes int // of every ten Leases
	}{{"elections=100000", 0}, {"mix=100000", 9}} {
		s := benchStore()
		for i := range 100_000 {
			l := nodeLease(i, time.Now())
			if i%10 >= c.nodes {
				l.Namespace, l.Name = fmt.Sprintf("team-%d", i%97), fmt.Sprintf("controller-%d", i)
			}
			_ = s.Add(l)
		}
		stores := []*store[*lock.Lease]{s}
		at := time.Now().UnixMicro()
		overdue := func(l *lock.Lease) bool { return l.StandingAt(at).Overdue() }
		b.Run(c.name+"/take", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				takeSnapshot(stores, overdue).Release()
			}
		})
		b.Run(c.name+"/nodes", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				snap := takeSnapshot(stores, overdue)
				snap.scanNodes()
				snap.Release()
			}
		})
	}
}
