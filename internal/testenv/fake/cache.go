package fake

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/lease-exporter/lease-exporter/informer"
)

// SyncedCache runs the real informer over a fake clientset holding leases, with clock now,
// and returns it synced; it is shut down when tb ends. The benchmarks of the scrape use it,
// so that what they time walks the cache's kept order as production scrapes do.
func SyncedCache(tb testing.TB, now func() time.Time, leases []*coordinationv1.Lease) *informer.Cache {
	tb.Helper()
	client := k8sfake.NewClientset()
	for _, l := range leases {
		if err := client.Tracker().Add(l); err != nil {
			tb.Fatal(err)
		}
	}
	c, err := informer.NewForClients(informer.Clients{List: client, Watch: client}, informer.Options{Now: now},
		slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(func() { cancel(); c.Shutdown() })
	c.Start(ctx)
	if err := c.WaitForCacheSync(ctx); err != nil {
		tb.Fatal(err)
	}
	return c
}

// ElectionLeases are n leader-election Leases held by controller replicas across 97
// namespaces, renewed 2 s before at, with a 15 s duration and 3 transitions.
func ElectionLeases(n int, at time.Time) []*coordinationv1.Lease {
	out := make([]*coordinationv1.Lease, n)
	for i := range n {
		out[i] = heldLease(fmt.Sprintf("team-%d", i%97), fmt.Sprintf("controller-%d", i),
			fmt.Sprintf("controller-%d-7d9f8b6c4-x2k9q_0b5e8a52", i), at.Add(-2*time.Second), 15, 3)
	}
	return out
}

// MixLeases are n Leases of a large cluster: nine in ten node heartbeats (on time, renewed
// 5 s before at, 40 s duration), one in ten as ElectionLeases.
func MixLeases(n int, at time.Time) []*coordinationv1.Lease {
	out := make([]*coordinationv1.Lease, n)
	for i := range n {
		if i%10 == 0 {
			out[i] = heldLease(fmt.Sprintf("team-%d", i%97), fmt.Sprintf("controller-%d", i),
				fmt.Sprintf("controller-%d-7d9f8b6c4-x2k9q_0b5e8a52", i), at.Add(-2*time.Second), 15, 3)
			continue
		}
		name := fmt.Sprintf("ip-10-%d-%d-%d.eu-west-1.compute.internal", i/65536%256, i/256%256, i%256)
		out[i] = heldLease("kube-node-lease", name, name, at.Add(-5*time.Second), 40, 0)
	}
	return out
}

func heldLease(ns, name, holder string, renew time.Time, duration, transitions int32) *coordinationv1.Lease {
	r, a := metav1.NewMicroTime(renew), metav1.NewMicroTime(renew.Add(-10*time.Minute))
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name),
			CreationTimestamp: metav1.NewTime(renew.Add(-time.Hour))},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &r, AcquireTime: &a,
			LeaseDurationSeconds: &duration, LeaseTransitions: &transitions},
	}
}
