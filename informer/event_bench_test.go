package informer

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
)

// The benchmarks below split the CPU of one Lease renewal, which hack/bench measures end to
// end (watch stream to cache), into the parts the exporter pays for in-process.

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
	l, err := New(client, Options{TotalShards: 1}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	l.Start(ctx)
	if err := l.WaitForCacheSync(ctx); err != nil {
		b.Fatal(err)
	}
	count := 0
	l.Range(func(*Lease) { count++ })
	if count != n {
		b.Fatalf("synced %d Leases, want %d", count, n)
	}
	after := liveHeap()
	runtime.KeepAlive(l)
	cancel()
	l.Shutdown()
	return float64(after-before) / float64(n)
}
