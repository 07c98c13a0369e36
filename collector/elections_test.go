package collector

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lease-exporter/lease-exporter/internal/testenv/lockobj"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/sharding"
)

// The class counters, told of each observation as a store makes it, count every renewal of a lock by its class and each live holder
// change's leaderless time by how the previous tenure ended, and a sharded exporter labels
// them with its shard.
func TestElectionsCountWhatTheStoreObserves(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	e := NewElections(reg, sharding.Label(1, 2))
	observe, t0 := lock.Observation(lock.HistoryOptions{}), lockobj.T0
	var prev *lock.Lease
	rv := 0
	see := func(holder string, at time.Duration, live bool) {
		rv++
		tr := observe(prev, lock.Project(lockobj.Lease("u1", fmt.Sprint(rv), holder, t0.Add(at))), t0.Add(at).UnixMicro(), live)
		e.Observed(tr)
		prev = tr.Rec
	}
	see("a", 0, true)
	for s := 2; s <= 10; s += 2 { // five renewals
		see("a", time.Duration(s)*time.Second, true)
	}
	see("", 11*time.Second, true)                       // a release
	see("b", 11*time.Second+300*time.Millisecond, true) // a handover, 0.3 s leaderless
	see("c", 40*time.Second, true)                      // b expired at 26.3 s: 13.7 s
	see("c", 42*time.Second, true)                      // a sixth renewal
	want := `# HELP lease_class_observed_renewals_total Renewals the exporter saw, by class: writes that moved renewTime forward under the same holder. A relist after a watch gap counts one, whatever it missed.
# TYPE lease_class_observed_renewals_total counter
lease_class_observed_renewals_total{class="apiserver-identity",shard="1"} 0
lease_class_observed_renewals_total{class="leader-election",shard="1"} 6
lease_class_observed_renewals_total{class="node-heartbeat",shard="1"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lease_class_observed_renewals_total"); err != nil {
		t.Error(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, mf := range mfs {
		if mf.GetName() != "lease_leaderless_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["shard"] != "1" {
				t.Errorf("leaderless series without the shard label: %v", labels)
			}
			h := m.GetHistogram()
			got[labels["class"]+"/"+labels["ended"]] = fmt.Sprintf("%d %.1f", h.GetSampleCount(), h.GetSampleSum())
		}
	}
	want2 := map[string]string{"leader-election/released": "1 0.3", "leader-election/expired": "1 13.7", "leader-election/taken_over": "0 0.0"}
	if fmt.Sprint(got) != fmt.Sprint(want2) {
		t.Errorf("leaderless times (count, sum) %v, want %v", got, want2)
	}
}
