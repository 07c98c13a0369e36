package informer

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/sharding"
)

var candidateTime = time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)

// serving makes the fake clientset's discovery serve leasecandidates in versions.
func serving(client *fake.Clientset, versions ...string) {
	d := client.Discovery().(*fakediscovery.FakeDiscovery)
	for _, v := range versions {
		d.Resources = append(d.Resources, &metav1.APIResourceList{GroupVersion: "coordination.k8s.io/" + v,
			APIResources: []metav1.APIResource{{Name: "leasecandidates", Namespaced: true, Kind: "LeaseCandidate",
				Verbs: metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}}}})
	}
}

func betaCandidate(ns, name, leaseName, emulation string, renewAgo time.Duration) *coordinationv1beta1.LeaseCandidate {
	renew := metav1.NewMicroTime(candidateTime.Add(-renewAgo))
	return &coordinationv1beta1.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: leaseName, RenewTime: &renew, BinaryVersion: "1.36.3",
			EmulationVersion: emulation, Strategy: coordinationv1.OldestEmulationVersion}}
}

// startCandidates builds the informer over client, discovers, starts and waits for sync.
func startCandidates(t *testing.T, client *fake.Clientset, opts Options) (*Cache, *prometheus.Registry, *bytes.Buffer) {
	t.Helper()
	opts.Now = func() time.Time { return candidateTime }
	reg, logs := prometheus.NewRegistry(), &bytes.Buffer{}
	l, err := NewForClients(Clients{List: client, Watch: client}, opts, slog.New(slog.NewTextHandler(logs, nil)), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(func() { cancel(); l.Shutdown() })
	if err := l.DiscoverCandidates(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	l.Start(ctx)
	if err := l.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	return l, reg, logs
}

func candidateKeys(l *Cache) []string {
	var keys []string
	l.RangeCandidates(func(c *lock.Candidate) { keys = append(keys, c.Namespace()+"/"+c.Name()+"→"+c.LeaseName) })
	slices.Sort(keys)
	return keys
}

func TestDiscoverCandidatesPrefersV1beta1AndFallsBackToV1alpha2(t *testing.T) {
	for _, tc := range []struct {
		served []string
		want   string
	}{{[]string{"v1alpha2", "v1beta1"}, "v1beta1"}, {[]string{"v1alpha2"}, "v1alpha2"}, {[]string{"v1beta1"}, "v1beta1"}} {
		client := fake.NewClientset()
		serving(client, tc.served...)
		got, err := servedCandidateVersion(context.Background(), Clients{List: client, Watch: client}, []string{""})
		if err != nil || got != tc.want {
			t.Errorf("served %v: got %q, %v; want %q", tc.served, got, err, tc.want)
		}
	}
}

func TestCandidatesNotServedLeavesFeatureOffWithOneInfoLine(t *testing.T) {
	client := fake.NewClientset(betaCandidate("kube-system", "a", "kube-scheduler", "1.36.0", time.Second))
	l, reg, logs := startCandidates(t, client, Options{})
	if got := candidateKeys(l); len(got) != 0 {
		t.Errorf("candidates %v cached although the API is not served", got)
	}
	if v := watched(t, reg); v != 0 {
		t.Errorf("lease_exporter_lease_candidates_watched = %v, want 0", v)
	}
	if n := strings.Count(logs.String(), "not watching LeaseCandidates"); n != 1 || !strings.Contains(logs.String(), "level=INFO") {
		t.Errorf("want one info line saying LeaseCandidates are not watched, got:\n%s", logs)
	}
	if !l.HasSynced() {
		t.Error("not synced without candidates")
	}
}

func TestCandidatesForbiddenLeavesFeatureOff(t *testing.T) {
	client := fake.NewClientset()
	serving(client, "v1beta1")
	client.PrependReactor("list", "leasecandidates", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leasecandidates"}, "", nil)
	})
	l, reg, logs := startCandidates(t, client, Options{})
	if len(l.candidates) != 0 {
		t.Errorf("%d candidate scopes although listing is forbidden", len(l.candidates))
	}
	if v := watched(t, reg); v != 0 {
		t.Errorf("lease_exporter_lease_candidates_watched = %v, want 0", v)
	}
	if !strings.Contains(logs.String(), "forbidden") {
		t.Errorf("the info line does not say why:\n%s", logs)
	}
}

// Throttled (429) at start, candidate discovery does not hold up or stop the exporter: it
// warns, the locks are watched at once, and after Start the discovery is retried with backoff
// until it answers; then the candidates are watched, without a restart.
func TestThrottledCandidateDiscoveryRetriesUntilItAnswersThenWatches(t *testing.T) {
	saved := candidateBackoff
	candidateBackoff.first, candidateBackoff.max = 10*time.Millisecond, 40*time.Millisecond
	t.Cleanup(func() { candidateBackoff = saved })
	client := fake.NewClientset(betaCandidate("kube-system", "cm-1", "kube-controller-manager", "1.36.0", time.Second))
	serving(client, "v1beta1")
	var throttle atomic.Int32
	throttle.Store(5) // the start's one attempt and four retries
	client.PrependReactor("list", "leasecandidates", func(k8stesting.Action) (bool, runtime.Object, error) {
		if throttle.Add(-1) >= 0 {
			return true, nil, apierrors.NewTooManyRequests("the server has received too many requests", 1)
		}
		return false, nil, nil
	})
	reg, logs := prometheus.NewRegistry(), &syncbuffer.Buffer{}
	l, err := NewForClients(Clients{List: client, Watch: client}, Options{Now: func() time.Time { return candidateTime }},
		slog.New(slog.NewTextHandler(logs, nil)), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(func() { cancel(); l.Shutdown() })
	begun := time.Now()
	if err := l.DiscoverCandidates(ctx, time.Minute); err != nil {
		t.Fatalf("throttled discovery stopped the exporter: %v", err)
	}
	if took := time.Since(begun); took > time.Second {
		t.Errorf("throttled discovery held up the start for %s", took)
	}
	if l.WatchingCandidates() || watched(t, reg) != 0 {
		t.Fatal("candidates watched although their discovery was throttled")
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "429 Too Many Requests") {
		t.Errorf("want a warning naming the throttling, got:\n%s", logs)
	}
	l.Start(ctx)
	for !l.WatchingCandidates() || !l.HasSynced() {
		if ctx.Err() != nil {
			t.Fatalf("candidates not watched and synced after the throttling ended; log:\n%s", logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got, want := candidateKeys(l), []string{"kube-system/cm-1→kube-controller-manager"}; !slices.Equal(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
	if v := watched(t, reg); v != 1 {
		t.Errorf("lease_exporter_lease_candidates_watched = %v, want 1", v)
	}
	if n := throttle.Load(); n >= 0 {
		t.Errorf("%d throttled answers left unasked: the retry stopped early", n+1)
	}
}

// TestCandidatesDiscoveryUnauthorizedLeavesFeatureOff: a rejected token makes discovery answer
// 401. That must switch candidates off, not stop the exporter: with bad credentials it stays
// up and reports its failing Lease watch until the credentials are fixed (TestNoSecretsInLogs).
func TestCandidatesDiscoveryUnauthorizedLeavesFeatureOff(t *testing.T) {
	client := fake.NewClientset()
	serving(client, "v1beta1")
	client.PrependReactor("get", "resource", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewUnauthorized("Unauthorized")
	})
	l, reg, logs := startCandidates(t, client, Options{})
	if len(l.candidates) != 0 || watched(t, reg) != 0 {
		t.Error("candidates watched although the credentials were rejected")
	}
	if !strings.Contains(logs.String(), "Unauthorized") {
		t.Errorf("the info line does not say why:\n%s", logs)
	}
}

func TestNoCandidatesOptionSkipsDiscovery(t *testing.T) {
	client := fake.NewClientset()
	serving(client, "v1beta1")
	l, reg, _ := startCandidates(t, client, Options{NoCandidates: true})
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "leasecandidates" || a.GetResource().Resource == "resource" {
			t.Errorf("action %s %s although candidates are turned off", a.GetVerb(), a.GetResource().Resource)
		}
	}
	if len(l.candidates) != 0 || watched(t, reg) != 0 {
		t.Error("candidates watched although turned off")
	}
}

func TestCandidatesWatchedInDiscoveredVersion(t *testing.T) {
	renew := metav1.NewMicroTime(candidateTime.Add(-time.Minute))
	alpha := &coordinationv1alpha2.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "cm-1"},
		Spec: coordinationv1alpha2.LeaseCandidateSpec{LeaseName: "kube-controller-manager", RenewTime: &renew,
			BinaryVersion: "1.35.4", EmulationVersion: "1.35.0", Strategy: coordinationv1.OldestEmulationVersion}}
	client := fake.NewClientset(alpha)
	serving(client, "v1alpha2")
	l, reg, _ := startCandidates(t, client, Options{})
	if got, want := candidateKeys(l), []string{"kube-system/cm-1→kube-controller-manager"}; !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
	l.RangeCandidates(func(c *lock.Candidate) {
		if c.BinaryVersion != "1.35.4" || c.EmulationVersion != "1.35.0" || c.Strategy != "OldestEmulationVersion" ||
			c.RenewTime != renew.UnixMicro() || c.HasPingTime || !c.Fresh(candidateTime.UnixMicro()) {
			t.Errorf("record %+v does not carry the spec", *c)
		}
	})
	if v := watched(t, reg); v != 1 {
		t.Errorf("lease_exporter_lease_candidates_watched = %v, want 1", v)
	}
}

func TestCandidatesFollowNamespaceFilterAndTheirLeasesShard(t *testing.T) {
	var objs []runtime.Object
	var leases []string
	for i := range 20 {
		name := "lease-" + string(rune('a'+i))
		leases = append(leases, name)
		objs = append(objs, betaCandidate("team", name+"-x", name, "1.36.0", time.Second),
			betaCandidate("team", name+"-y", name, "1.36.0", time.Second),
			betaCandidate("other", name+"-x", name, "1.36.0", time.Second))
	}
	client := fake.NewClientset(objs...)
	serving(client, "v1beta1")
	l, _, _ := startCandidates(t, client, Options{Namespaces: []string{"team"}, Shard: 1, TotalShards: 2})
	var want []string
	for _, name := range leases {
		if sharding.Of("team", name, 2) == 1 {
			want = append(want, "team/"+name+"-x→"+name, "team/"+name+"-y→"+name)
		}
	}
	slices.Sort(want)
	if got := candidateKeys(l); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("candidates %v, want those of shard 1's Leases in namespace team: %v", got, want)
	}
}

func TestObserveCandidateJudgesRenewalsByTheExportersClock(t *testing.T) {
	now := candidateTime.UnixMicro()
	renewed := func(at time.Time) *lock.Candidate {
		c := lock.ProjectCandidate(&metav1.ObjectMeta{Namespace: "ns", Name: "c"}, "l", "1.36.3", "1.36.0", "", &metav1.MicroTime{Time: at}, nil)
		return c
	}
	// A list places the renewal at its renewTime, capped at now: a dead candidate is not fresh.
	old := lock.ObserveCandidate(nil, renewed(candidateTime.Add(-time.Hour)), now, false)
	if old.ObservedRenewTime != candidateTime.Add(-time.Hour).UnixMicro() || old.Fresh(now) {
		t.Errorf("listed hour-old renewal observed at %d, fresh %v", old.ObservedRenewTime, old.Fresh(now))
	}
	// A renewal seen live is observed when it arrives, whatever the candidate's clock says.
	ahead := lock.ObserveCandidate(old, renewed(candidateTime.Add(time.Hour)), now, true)
	if ahead.ObservedRenewTime != now || !ahead.Fresh(now) {
		t.Errorf("live renewal observed at %d, want %d", ahead.ObservedRenewTime, now)
	}
	if ahead.Fresh(now + (lock.CandidateFreshness + time.Second).Microseconds()) {
		t.Error("fresh longer than CandidateFreshness after its last renewal")
	}
	// An event that does not change the record returns the cached one: no store write.
	if again := lock.ObserveCandidate(ahead, renewed(candidateTime.Add(time.Hour)), now+1e6, true); again != ahead {
		t.Error("unchanged candidate replaced")
	}
	// A candidate without renewTime is never fresh.
	none := lock.ProjectCandidate(&metav1.ObjectMeta{Namespace: "ns", Name: "c"}, "l", "", "", "", nil, nil)
	if lock.ObserveCandidate(nil, none, now, true).Fresh(now) {
		t.Error("candidate without renewTime fresh")
	}
}

// watched reads lease_exporter_lease_candidates_watched from reg.
func watched(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "lease_exporter_lease_candidates_watched" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("lease_exporter_lease_candidates_watched not registered")
	return 0
}

func TestCandidatesIgnoreTheLeaseSelector(t *testing.T) {
	client := fake.NewClientset(betaCandidate("kube-system", "s-1", "kube-scheduler", "1.36.0", time.Second))
	serving(client, "v1beta1")
	l, _, _ := startCandidates(t, client, Options{LeaseSelector: "app=ctrl"})
	if got := candidateKeys(l); !slices.Equal(got, []string{"kube-system/s-1→kube-scheduler"}) {
		t.Errorf("candidates %v with a lease selector, want the unlabelled candidate kept", got)
	}
	for _, a := range client.Actions() {
		if lw, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "leasecandidates" && !lw.GetListRestrictions().Labels.Empty() {
			t.Errorf("candidates listed with label selector %s", lw.GetListRestrictions().Labels)
		}
	}
}
