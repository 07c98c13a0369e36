package collector

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/lease-exporter/lease-exporter/informer"
	testfake "github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
)

// scrapeTime is the fixed clock of the exposition tests.
var scrapeTime = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// syncedView runs the real informer over a fake clientset holding leases and waits for sync.
func syncedView(t *testing.T, leases ...*coordinationv1.Lease) *informer.Cache {
	t.Helper()
	v, _ := syncedViewWithClient(t, leases...)
	return v
}

func syncedViewWithClient(t *testing.T, leases ...*coordinationv1.Lease) (*informer.Cache, *fake.Clientset) {
	t.Helper()
	return syncedViewWithClock(t, func() time.Time { return scrapeTime }, leases...)
}

// syncedViewWithClock is syncedViewWithClient on the informer clock now: one that moves sees
// events live a second after the watch opens (and so measures a holder's clock skew).
func syncedViewWithClock(t *testing.T, now func() time.Time, leases ...*coordinationv1.Lease) (*informer.Cache, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset()
	for _, l := range leases {
		if _, err := client.CoordinationV1().Leases(l.Namespace).Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	v, err := informer.NewForClients(informer.Clients{List: client, Watch: client}, informer.Options{Now: now},
		slog.New(slog.NewTextHandler(io.Discard, nil)), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); v.Shutdown() })
	v.Start(ctx)
	if err := v.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	// The fake clientset does not replay events from a resource version: wait until the
	// informer's watch is open so that later updates reach it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if watchUp(mfs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("informer watch never opened")
		}
	}
	return v, client
}

func watchUp(mfs []*dto.MetricFamily) bool {
	for _, mf := range mfs {
		if mf.GetName() == "lease_exporter_watch_up" {
			return mf.GetMetric()[0].GetGauge().GetValue() == 1
		}
	}
	return false
}

// lease builds a Lease; opts fill in the spec.
func lease(ns, name string, opts ...func(*coordinationv1.Lease)) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, UID: types.UID(ns + "-" + name),
		CreationTimestamp: metav1.NewTime(scrapeTime.Add(-time.Hour)),
	}}
	for _, o := range opts {
		o(l)
	}
	return l
}

func held(holder string, renewAgo time.Duration, duration int32) func(*coordinationv1.Lease) {
	return func(l *coordinationv1.Lease) {
		renew := metav1.NewMicroTime(scrapeTime.Add(-renewAgo))
		acquire := metav1.NewMicroTime(scrapeTime.Add(-10 * time.Minute))
		l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.AcquireTime = &holder, &renew, &acquire
		l.Spec.LeaseDurationSeconds = &duration
	}
}

func transitions(n int32) func(*coordinationv1.Lease) {
	return func(l *coordinationv1.Lease) { l.Spec.LeaseTransitions = &n }
}

// staticView is a hand-built view for the not-synced and stale cases.
type staticView struct {
	synced bool
	asOf   time.Time
	leases []*lock.Lease
}

func (v staticView) HasSynced() bool { return v.synced }
func (v staticView) Range(fn func(*lock.Lease)) {
	for _, l := range v.leases {
		fn(l)
	}
}
func (v staticView) JudgedAt(time.Time) time.Time { return v.asOf }

// Snapshot and Scan make it an informer.Ordered: sorted at each walk, as the Cache keeps it.
func (v staticView) Snapshot(nodes func(*lock.Lease) bool) informer.Snapshot {
	return testfake.Snapshot(v, nodes)
}
func (v staticView) Scan(fn func([]*lock.Lease)) { testfake.Scan(v, fn) }

// It watches LeaseCandidates and has none, so it is a whole Source.
func (v staticView) WatchingCandidates() bool              { return true }
func (v staticView) RangeCandidates(func(*lock.Candidate)) {}

// Has scans, where informer.Cache looks up its stores.
func (v staticView) Has(kind lock.Kind, namespace, name string) bool {
	for _, l := range v.leases {
		if l.Kind() == kind && l.Namespace() == namespace && l.Name() == name {
			return true
		}
	}
	return false
}
