package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	coordinationv1 "k8s.io/api/coordination/v1"
)

// The class summary counts each lock once by standing and bins its renew age as the status
// page does, in the status collector's one pass; a sharded exporter labels both with its
// shard (and nothing else), and an unsynced one says nothing of them.
func TestClassSummary(t *testing.T) {
	v := syncedView(t,
		lease("kube-node-lease", "on-time", held("on-time", 10*time.Second, 40)), // exactly on the 10 s bound
		lease("kube-node-lease", "late", held("late", 21*time.Second, 40)),
		lease("kube-node-lease", "expired", held("expired", 2*time.Hour, 40)),
		lease("kube-node-lease", "never", held("never", 0, 40), func(l *coordinationv1.Lease) { l.Spec.RenewTime = nil }),
		lease("team-a", "released", held("", time.Second, 15)),
	)
	clock := func() time.Time { return scrapeTime }
	got := exposition(t, NewStatus(v, Settings{Now: clock, Shard: "2"}))
	for _, want := range []string{
		`lease_class_locks{class="node-heartbeat",shard="2",state="on_time"} 1`,
		`lease_class_locks{class="node-heartbeat",shard="2",state="lagging"} 1`,
		`lease_class_locks{class="node-heartbeat",shard="2",state="expired"} 2`, // the one without renewTime too
		`lease_class_locks{class="node-heartbeat",shard="2",state="released"} 0`,
		`lease_class_locks{class="leader-election",shard="2",state="released"} 1`,
		`lease_class_locks{class="apiserver-identity",shard="2",state="on_time"} 0`,
		`lease_class_renew_age_seconds_bucket{class="node-heartbeat",shard="2",le="10"} 1`,
		`lease_class_renew_age_seconds_bucket{class="node-heartbeat",shard="2",le="30"} 2`,
		`lease_class_renew_age_seconds_bucket{class="node-heartbeat",shard="2",le="3600"} 2`,
		`lease_class_renew_age_seconds_bucket{class="node-heartbeat",shard="2",le="+Inf"} 3`, // never renewed has no age
		`lease_class_renew_age_seconds_sum{class="node-heartbeat",shard="2"} 7231`,
		`lease_class_renew_age_seconds_count{class="node-heartbeat",shard="2"} 3`,
		`lease_class_renew_age_seconds_bucket{class="leader-election",shard="2",le="10"} 1`,
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\nlease_class_locks{") + strings.Count(got, "\nlease_class_renew_age_seconds_"); n != 12+36 {
		t.Errorf("%d series, want 48 whatever the number of locks (docs/metrics.md says 12 and 36)", n)
	}
	if unsharded := exposition(t, NewStatus(v, Settings{Now: clock})); strings.Contains(unsharded, "shard=") {
		t.Errorf("an unsharded exporter labels its summary with a shard:\n%s", unsharded)
	}
	var _ prometheus.Collector = NewStatus(v, Settings{Now: clock})
	if n := testutil.CollectAndCount(NewStatus(staticView{synced: false}, Settings{Now: clock}), classLocksName, classRenewAgeName); n != 0 {
		t.Errorf("before the cache synced: %d series, want none", n)
	}
	lint(t, NewStatus(v, Settings{Now: clock}))
}
