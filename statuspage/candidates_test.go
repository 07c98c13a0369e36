package statuspage

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// candidateView is a view that watches LeaseCandidates.
type candidateView struct {
	view
	candidates []*lock.Candidate
}

func (v candidateView) WatchingCandidates() bool { return true }
func (v candidateView) RangeCandidates(fn func(*lock.Candidate)) {
	for _, c := range v.candidates {
		fn(c)
	}
}

// candidate is a LeaseCandidate for kube-system/kube-scheduler seen renewing at renewed.
func candidate(name, binary string, renewed time.Time) *lock.Candidate {
	r, p := metav1.NewMicroTime(renewed), metav1.NewMicroTime(renewed.Add(-time.Second))
	c := lock.ProjectCandidate(&metav1.ObjectMeta{Namespace: "kube-system", Name: name}, "kube-scheduler", binary, "1.35.0",
		string(coordinationv1.OldestEmulationVersion), &r, &p)
	return lock.ObserveCandidate(nil, c, renewed.UnixMicro(), true)
}

// A coordinated Lease's detail page and JSON list its candidates with their versions,
// freshness and renewals, and say whom the API server prefers: here sched-old, while
// sched-new still holds (an upgrade waiting for its handover); sched-gone is stale.
func TestDetailShowsCandidates(t *testing.T) {
	o := fake.NewObserver(lock.DefaultHistory)
	now := t0.Add(time.Hour)
	l := lease("kube-system", "kube-scheduler", "u-s", 1, "sched-new", now.Add(-time.Second), now.Add(-time.Minute))
	l.Spec.Strategy = ptr(coordinationv1.OldestEmulationVersion)
	l.Spec.PreferredHolder = ptr("sched-old")
	held := o.Observe(l, now.Add(-time.Second), true)
	h := New(candidateView{view: view{leases: []*lock.Lease{held}, synced: true}, candidates: []*lock.Candidate{
		candidate("sched-new", "1.36.0", now.Add(-time.Minute)),
		candidate("sched-old", "1.35.0", now.Add(-2*time.Minute)),
		candidate("sched-gone", "1.34.0", now.Add(-11*time.Minute)),
	}}, slog.New(slog.DiscardHandler), func() time.Time { return now })

	d := getJSON[api.Detail](t, h, "/api/v1/leases/kube-system/kube-scheduler")
	if d.Strategy != "OldestEmulationVersion" || d.PreferredHolder != "sched-old" || len(d.Candidates) != 3 {
		t.Fatalf("strategy %q, preferred %q, %d candidates", d.Strategy, d.PreferredHolder, len(d.Candidates))
	}
	var got []string
	for _, c := range d.Candidates {
		got = append(got, strings.Join([]string{c.Name, c.BinaryVersion, map[bool]string{true: "fresh", false: "stale"}[c.Fresh],
			map[bool]string{true: "preferred", false: "-"}[c.Preferred]}, " "))
	}
	if want := "sched-gone 1.34.0 stale -, sched-new 1.36.0 fresh -, sched-old 1.35.0 fresh preferred"; strings.Join(got, ", ") != want {
		t.Errorf("candidates %q, want %q", strings.Join(got, ", "), want)
	}
	if c := d.Candidates[2]; c.ObservedRenewTime == nil || !c.ObservedRenewTime.Equal(now.Add(-2*time.Minute)) || c.PingTime == nil {
		t.Errorf("sched-old's renewal %v and ping %v", c.ObservedRenewTime, c.PingTime)
	}

	_, page := get(t, h, "/leases/kube-system/kube-scheduler")
	for _, want := range []string{
		`<strong class="holder" id="preferred">sched-old</strong> <span class="bad">(not the holder)</span>`,
		`<tr data-name="sched-gone" class="unhealthy">`,
		`sched-old <span class="ok">(preferred)</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the detail page lacks %s", want)
		}
	}

	// Without a LeaseCandidate watch, candidates are null, not an empty list.
	plain := New(view{leases: []*lock.Lease{held}, synced: true}, slog.New(slog.DiscardHandler), func() time.Time { return now })
	if d := getJSON[api.Detail](t, plain, "/api/v1/leases/kube-system/kube-scheduler"); d.Candidates != nil {
		t.Errorf("candidates %v without a LeaseCandidate watch, want null", d.Candidates)
	}
}
