package collector

import (
	"flag"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/lock"
)

var update = flag.Bool("update", false, "rewrite testdata/*.prom from the collector's output")

const header = `# HELP lease_exporter_cache_synced Whether the informer cache has completed its initial list (1) or not (0).
# TYPE lease_exporter_cache_synced gauge
# HELP lease_exporter_watch_stale_seconds Seconds the exporter's view may lag the API server: 0 while the watch is open and caught up.
# TYPE lease_exporter_watch_stale_seconds gauge
`

func TestExposition(t *testing.T) {
	for _, tc := range []struct {
		name   string
		leases []*coordinationv1.Lease
		want   string // the lease_* series, without HELP/TYPE
	}{
		{
			name:   "held leader-election lease",
			leases: []*coordinationv1.Lease{lease("team-a", "ctrl", held("pod-1_abc", 2*time.Second, 15), transitions(3))},
			want: `lease_acquire_timestamp_seconds{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 1.7952618e+09
lease_duration_seconds{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 15
lease_expiry_timestamp_seconds{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 1.795262413e+09
lease_held{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 1
lease_info{class="leader-election",holder="pod-1_abc",kind="Lease",lease="ctrl",namespace="team-a",owner_kind="",owner_name="",preferred_holder="",strategy=""} 1
lease_observed_holder_changes_total{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 0
lease_observed_renew_timestamp_seconds{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 1.795262398e+09
lease_renew_age_seconds{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 2
lease_renew_timestamp_seconds{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 1.795262398e+09
lease_transitions_total{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 3
`,
		},
		{
			name:   "expired lease is not held",
			leases: []*coordinationv1.Lease{lease("team-a", "ctrl", held("pod-1", 20*time.Second, 15))},
			want:   `lease_held{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 0`,
		},
		{
			name:   "released lease (empty holder) is not held",
			leases: []*coordinationv1.Lease{lease("team-a", "ctrl", held("", time.Second, 15))},
			want: `lease_held{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 0
lease_info{class="leader-election",holder="",kind="Lease",lease="ctrl",namespace="team-a",owner_kind="",owner_name="",preferred_holder="",strategy=""} 1`,
		},
		{
			name:   "nil spec: only info, held 0 and the observed counter",
			leases: []*coordinationv1.Lease{lease("team-a", "empty")},
			want: `lease_held{class="leader-election",kind="Lease",lease="empty",namespace="team-a"} 0
lease_info{class="leader-election",holder="",kind="Lease",lease="empty",namespace="team-a",owner_kind="",owner_name="",preferred_holder="",strategy=""} 1
lease_observed_holder_changes_total{class="leader-election",kind="Lease",lease="empty",namespace="team-a"} 0`,
		},
		{
			name: "renew time without duration is expired and has no expiry",
			leases: []*coordinationv1.Lease{lease("team-a", "nodur", func(l *coordinationv1.Lease) {
				h, r := "x", metav1.NewMicroTime(scrapeTime)
				l.Spec.HolderIdentity, l.Spec.RenewTime = &h, &r
			})},
			want: `lease_held{class="leader-election",kind="Lease",lease="nodur",namespace="team-a"} 0
lease_renew_age_seconds{class="leader-election",kind="Lease",lease="nodur",namespace="team-a"} 0`,
		},
		{
			// First seen in the initial list: judged by its renewTime, but never later than when
			// the exporter saw it, so a holder whose clock runs ahead cannot stretch its lease.
			name:   "renew time in the future: observed when first seen, held",
			leases: []*coordinationv1.Lease{lease("team-a", "skew", held("x", -5*time.Second, 15))},
			want: `lease_held{class="leader-election",kind="Lease",lease="skew",namespace="team-a"} 1
lease_observed_renew_timestamp_seconds{class="leader-election",kind="Lease",lease="skew",namespace="team-a"} 1.7952624e+09
lease_renew_age_seconds{class="leader-election",kind="Lease",lease="skew",namespace="team-a"} 0`,
		},
		{
			name: "coordinated leader election fields",
			leases: []*coordinationv1.Lease{lease("kube-system", "kube-scheduler", held("a", time.Second, 15), func(l *coordinationv1.Lease) {
				s, p := coordinationv1.OldestEmulationVersion, "b"
				l.Spec.Strategy, l.Spec.PreferredHolder = &s, &p
			})},
			want: `lease_info{class="leader-election",holder="a",kind="Lease",lease="kube-scheduler",namespace="kube-system",owner_kind="",owner_name="",preferred_holder="b",strategy="OldestEmulationVersion"} 1`,
		},
		{
			name: "classes",
			leases: []*coordinationv1.Lease{
				lease("kube-node-lease", "node-1", held("node-1", time.Second, 40)),
				lease("kube-system", "apiserver-xyz", held("apiserver-xyz_1", time.Second, 3600), func(l *coordinationv1.Lease) {
					l.Labels = map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver"}
				}),
			},
			want: `lease_held{class="apiserver-identity",kind="Lease",lease="apiserver-xyz",namespace="kube-system"} 1
lease_held{class="node-heartbeat",kind="Lease",lease="node-1",namespace="kube-node-lease"} 1
lease_exporter_leases{class="apiserver-identity"} 1
lease_exporter_leases{class="leader-election"} 0
lease_exporter_leases{class="node-heartbeat"} 1`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := syncedView(t, tc.leases...)
			c := New(v, Settings{Now: func() time.Time { return scrapeTime }, Extended: true, PerLeaseNodeHeartbeats: true})
			got := exposition(t, c, NewStatus(v, Settings{Now: func() time.Time { return scrapeTime }}))
			for _, line := range strings.Split(strings.TrimSpace(tc.want), "\n") {
				if !strings.Contains(got, line+"\n") {
					t.Errorf("missing line\n  %s\nin exposition:\n%s", line, got)
				}
			}
			lint(t, c)
		})
	}
}

// TestOmittedSeries checks that series whose source field is missing are not exported as 0.
func TestOmittedSeries(t *testing.T) {
	got := exposition(t, New(syncedView(t, lease("team-a", "empty")), Settings{Now: func() time.Time { return scrapeTime }}))
	for _, name := range []string{"lease_renew_timestamp_seconds{", "lease_acquire_timestamp_seconds{", "lease_duration_seconds{",
		"lease_expiry_timestamp_seconds{", "lease_renew_age_seconds{", "lease_transitions_total{", "lease_observed_renew_timestamp_seconds{"} {
		if strings.Contains(got, name) {
			t.Errorf("%s exported for a Lease without the source field:\n%s", name, got)
		}
	}
}

func TestNotSyncedExportsNoLeaseSeries(t *testing.T) {
	rec := lock.Project(lease("a", "b", held("x", time.Second, 15)))
	view := staticView{synced: false, asOf: scrapeTime.Add(-30 * time.Second), leases: []*lock.Lease{rec}}
	clock := func() time.Time { return scrapeTime }
	want := header + "lease_exporter_cache_synced 0\nlease_exporter_watch_stale_seconds 30\n"
	if err := testutil.CollectAndCompare(NewStatus(view, Settings{Now: clock}), strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(New(view, Settings{Now: clock})); n != 0 {
		t.Fatalf("%d lease series exported before sync", n)
	}
}

// TestStaleViewFreezesHeld checks that a broken watch never turns a held Lease into "no holder":
// held and renew age are evaluated at the moment the view was last current.
func TestStaleViewFreezesHeld(t *testing.T) {
	lost := scrapeTime.Add(-time.Minute)
	rec := lock.Project(lease("a", "b", held("x", time.Minute+2*time.Second, 15)))
	view := staticView{synced: true, asOf: lost, leases: []*lock.Lease{rec}}
	got := exposition(t, New(view, Settings{Now: func() time.Time { return scrapeTime }, Extended: true}), NewStatus(view, Settings{Now: func() time.Time { return scrapeTime }}))
	for _, line := range []string{
		`lease_held{class="leader-election",kind="Lease",lease="b",namespace="a"} 1`,
		`lease_renew_age_seconds{class="leader-election",kind="Lease",lease="b",namespace="a"} 2`,
		`lease_exporter_watch_stale_seconds 60`,
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("missing %s in\n%s", line, got)
		}
	}
}

// TestGolden compares a mixed cluster with testdata/golden.prom, which promtool also checks.
func TestGolden(t *testing.T) {
	v := syncedView(t,
		lease("team-a", "ctrl", held("pod-1_abc", 2*time.Second, 15), transitions(3), func(l *coordinationv1.Lease) {
			l.OwnerReferences = []metav1.OwnerReference{{Kind: "ConfigMap", Name: "other"}, {Kind: "Deployment", Name: "ctrl", Controller: ptr.To(true)}}
		}),
		lease("team-b", "released", held("", 30*time.Second, 15), transitions(7)),
		lease("kube-node-lease", "node-1", held("node-1", 5*time.Second, 40)),
		lease("kube-node-lease", "node-2", held("node-2", 25*time.Second, 40)),
		lease("kube-node-lease", "node-3", held("node-3", 10*time.Minute, 40)),
		lease("team-c", "empty"),
	)
	clock := func() time.Time { return scrapeTime }
	c, status := New(v, Settings{Now: clock}), NewStatus(v, Settings{Now: clock})
	got := exposition(t, c, status)
	const golden = "testdata/golden.prom"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./collector -run TestGolden -update to create it)", err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c, status)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(string(want))); err != nil {
		t.Fatal(err)
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: install Debian's prometheus package (apt-get install prometheus); .ci/run does this")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(want))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics %s: %v\n%s", golden, err, out)
	}
}

func exposition(t *testing.T, cs ...prometheus.Collector) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(cs...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if err := writeText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func lint(t *testing.T, c prometheus.Collector) {
	t.Helper()
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

// The lean default: no series for a node-heartbeat Lease on time, the overdue one's renewal
// time for one overdue, seven per other lock; two per node Lease with
// --metrics.node-heartbeats=per-lease; everything with --metrics.extended as well.
func TestDefaultAndExtendedSets(t *testing.T) {
	v := syncedView(t,
		lease("kube-node-lease", "node-1", held("node-1", 5*time.Second, 40)),
		lease("kube-node-lease", "node-2", held("node-2", 25*time.Second, 40)),
		lease("team-a", "ctrl", held("a", time.Second, 15), func(l *coordinationv1.Lease) {
			now := metav1.NewMicroTime(scrapeTime.Add(-time.Minute))
			n := int32(3)
			l.Spec.AcquireTime, l.Spec.LeaseTransitions = &now, &n
		}))
	families := func(got, class string) string {
		var names []string
		for _, line := range strings.Split(got, "\n") {
			if strings.Contains(line, `class="`+class+`"`) && !strings.HasPrefix(line, "lease_exporter_") && !strings.HasPrefix(line, "lease_class_") {
				names = append(names, line[:strings.Index(line, "{")])
			}
		}
		return strings.Join(names, ",")
	}
	clock := func() time.Time { return scrapeTime }
	lean := exposition(t, New(v, Settings{Now: clock}))
	if got := families(lean, "node-heartbeat"); got != "lease_overdue_observed_renew_timestamp_seconds" {
		t.Errorf("node Lease series by default: %s", got)
	}
	if want := `lease_overdue_observed_renew_timestamp_seconds{class="node-heartbeat",kind="Lease",lease="node-2",namespace="kube-node-lease"} 1.795262375e+09`; !strings.Contains(lean, want+"\n") {
		t.Errorf("the late node-2 (renewed 25 s ago, of 40) has no overdue series:\n%s", lean)
	}
	// No live renewal was seen, so no skew yet: seven of the eight.
	if got := families(lean, "leader-election"); got != "lease_acquire_timestamp_seconds,lease_duration_seconds,lease_held,lease_info,lease_observed_holder_changes_total,lease_observed_renew_timestamp_seconds,lease_observed_renewals_total" {
		t.Errorf("leader-election series by default: %s", got)
	}
	all := exposition(t, New(v, Settings{Now: clock, Extended: true}))
	want := "lease_acquire_timestamp_seconds,lease_duration_seconds,lease_expiry_timestamp_seconds,lease_held,lease_info,lease_observed_holder_changes_total,lease_observed_renew_timestamp_seconds,lease_observed_renewals_total,lease_renew_age_seconds,lease_renew_timestamp_seconds,lease_transitions_total"
	if got := families(all, "leader-election"); got != want {
		t.Errorf("leader-election series with --metrics.extended: %s", got)
	}
	if got := families(all, "node-heartbeat"); got != "lease_overdue_observed_renew_timestamp_seconds" {
		t.Errorf("node Lease series with --metrics.extended alone: %s", got)
	}
	perLease := exposition(t, New(v, Settings{Now: clock, PerLeaseNodeHeartbeats: true}))
	if got := families(perLease, "node-heartbeat"); got != "lease_held,lease_held,lease_observed_renew_timestamp_seconds,lease_observed_renew_timestamp_seconds,lease_overdue_observed_renew_timestamp_seconds" {
		t.Errorf("node Lease series with --metrics.node-heartbeats=per-lease: %s", got)
	}
	every := exposition(t, New(v, Settings{Now: clock, Extended: true, PerLeaseNodeHeartbeats: true}))
	distinct := slices.Compact(strings.Split(families(every, "node-heartbeat"), ","))
	if got := strings.Join(distinct, ","); got != "lease_acquire_timestamp_seconds,lease_duration_seconds,lease_expiry_timestamp_seconds,lease_held,lease_info,lease_observed_holder_changes_total,lease_observed_renew_timestamp_seconds,lease_observed_renewals_total,lease_overdue_observed_renew_timestamp_seconds,lease_renew_age_seconds,lease_renew_timestamp_seconds" {
		t.Errorf("node Lease families with both: %s", got)
	}
}
