package collector

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// candidateView runs the informer with LeaseCandidates served (v1beta1) over a fake clientset
// holding leases and candidates, and waits for sync.
func candidateView(t *testing.T, leases []*coordinationv1.Lease, candidates ...*coordinationv1beta1.LeaseCandidate) *informer.Cache {
	t.Helper()
	client := fake.NewClientset()
	client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: "coordination.k8s.io/v1beta1",
		APIResources: []metav1.APIResource{{Name: "leasecandidates", Namespaced: true, Verbs: metav1.Verbs{"list", "watch"}}},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	for _, l := range leases {
		if _, err := client.CoordinationV1().Leases(l.Namespace).Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range candidates {
		if _, err := client.CoordinationV1beta1().LeaseCandidates(c.Namespace).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	v, err := informer.NewForClients(informer.Clients{List: client, Watch: client}, informer.Options{Now: func() time.Time { return scrapeTime }},
		slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); v.Shutdown() })
	if err := v.DiscoverCandidates(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	v.Start(ctx)
	if err := v.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	return v
}

func coordinated(holder, preferred string) func(*coordinationv1.Lease) {
	return func(l *coordinationv1.Lease) {
		held(holder, time.Second, 15)(l)
		strategy := coordinationv1.OldestEmulationVersion
		l.Spec.Strategy, l.Spec.PreferredHolder = &strategy, &preferred
	}
}

func candidate(ns, name, lease, emulation string, renewAgo, pingAgo time.Duration) *coordinationv1beta1.LeaseCandidate {
	c := &coordinationv1beta1.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: lease, BinaryVersion: "1.36.3", EmulationVersion: emulation,
			Strategy: coordinationv1.OldestEmulationVersion, RenewTime: &metav1.MicroTime{Time: scrapeTime.Add(-renewAgo)}}}
	if pingAgo > 0 {
		c.Spec.PingTime = &metav1.MicroTime{Time: scrapeTime.Add(-pingAgo)}
	}
	return c
}

func TestCandidateSeriesOnlyForCoordinatedLeases(t *testing.T) {
	v := candidateView(t, []*coordinationv1.Lease{
		lease("kube-system", "kube-scheduler", coordinated("s-1", "s-2")),
		lease("kube-system", "kube-controller-manager", coordinated("cm-1", "cm-1")),
		lease("team-a", "ctrl", held("pod-1", time.Second, 15)),
	},
		candidate("kube-system", "s-1", "kube-scheduler", "1.36.0", time.Minute, 0),
		candidate("kube-system", "s-2", "kube-scheduler", "1.35.0", 20*time.Minute, 30*time.Second),
	)
	want := `# HELP lease_candidate_info LeaseCandidate of a coordinated leader election with its versions and strategy, always 1.
# TYPE lease_candidate_info gauge
lease_candidate_info{binary_version="1.36.3",candidate="s-1",emulation_version="1.36.0",lease="kube-scheduler",namespace="kube-system",strategy="OldestEmulationVersion"} 1
lease_candidate_info{binary_version="1.36.3",candidate="s-2",emulation_version="1.35.0",lease="kube-scheduler",namespace="kube-system",strategy="OldestEmulationVersion"} 1
# HELP lease_candidate_observed_renew_timestamp_seconds Unix time, by the exporter's clock, at which it saw the LeaseCandidate's renewTime change.
# TYPE lease_candidate_observed_renew_timestamp_seconds gauge
lease_candidate_observed_renew_timestamp_seconds{candidate="s-1",lease="kube-scheduler",namespace="kube-system"} 1.79526234e+09
lease_candidate_observed_renew_timestamp_seconds{candidate="s-2",lease="kube-scheduler",namespace="kube-system"} 1.7952612e+09
# HELP lease_candidate_ping_timestamp_seconds Unix time of the LeaseCandidate's spec.pingTime, when the API server last asked it to renew.
# TYPE lease_candidate_ping_timestamp_seconds gauge
lease_candidate_ping_timestamp_seconds{candidate="s-2",lease="kube-scheduler",namespace="kube-system"} 1.79526237e+09
# HELP lease_candidates Number of LeaseCandidates contending for the Lease.
# TYPE lease_candidates gauge
lease_candidates{lease="kube-controller-manager",namespace="kube-system"} 0
lease_candidates{lease="kube-scheduler",namespace="kube-system"} 2
# HELP lease_candidates_fresh Number of the Lease's LeaseCandidates the exporter saw renew within the last 10 minutes.
# TYPE lease_candidates_fresh gauge
lease_candidates_fresh{lease="kube-controller-manager",namespace="kube-system"} 0
lease_candidates_fresh{lease="kube-scheduler",namespace="kube-system"} 1
# HELP lease_holder_is_preferred Whether the Lease's holder is its spec.preferredHolder (1) or not (0); only for Leases that name one.
# TYPE lease_holder_is_preferred gauge
lease_holder_is_preferred{lease="kube-controller-manager",namespace="kube-system"} 1
lease_holder_is_preferred{lease="kube-scheduler",namespace="kube-system"} 0
`
	c := NewCandidates(v, Settings{Now: func() time.Time { return scrapeTime }})
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func TestCandidateSeriesAbsentUntilSynced(t *testing.T) {
	v := candidateView(t, nil, candidate("kube-system", "s-1", "kube-scheduler", "1.36.0", time.Minute, 0))
	c := NewCandidates(split{staticView{synced: false}, v}, Settings{Now: func() time.Time { return scrapeTime }})
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("%d series before the cache synced, want none", n)
	}
}

func TestCandidateSeriesNoneForOrdinaryLeases(t *testing.T) {
	v := candidateView(t, []*coordinationv1.Lease{lease("team-a", "ctrl", held("pod-1", time.Second, 15))})
	if n := testutil.CollectAndCount(NewCandidates(v, Settings{Now: func() time.Time { return scrapeTime }})); n != 0 {
		t.Errorf("%d coordinated-election series for a cluster without coordinated Leases, want none", n)
	}
}

// split is a CoordinatedView whose Leases and LeaseCandidates come from different views.
type split struct {
	informer.View
	informer.CandidateView
}

// staticCandidates is a CandidateView that watches none.
type staticCandidates struct{}

func (staticCandidates) WatchingCandidates() bool              { return false }
func (staticCandidates) RangeCandidates(func(*lock.Candidate)) {}

func TestNoCandidateCountsWhenCandidatesAreNotWatched(t *testing.T) {
	v := syncedView(t, lease("kube-system", "kube-scheduler", coordinated("s-1", "s-2")))
	want := `# HELP lease_holder_is_preferred Whether the Lease's holder is its spec.preferredHolder (1) or not (0); only for Leases that name one.
# TYPE lease_holder_is_preferred gauge
lease_holder_is_preferred{lease="kube-scheduler",namespace="kube-system"} 0
`
	if err := testutil.CollectAndCompare(NewCandidates(split{v, staticCandidates{}}, Settings{Now: func() time.Time { return scrapeTime }}), strings.NewReader(want)); err != nil {
		t.Errorf("want only lease_holder_is_preferred, no lease_candidates 0 for a coordinated Lease when candidates are not watched: %v", err)
	}
}
