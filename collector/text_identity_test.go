package collector

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// TestTextWriterMatchesClientGolang proves the fast path renders exactly what client_golang
// renders for the same Leases: same bytes, so it is as lint-clean as the collector.
func TestTextWriterMatchesClientGolang(t *testing.T) {
	clock := func() time.Time { return scrapeTime }
	for _, tc := range []struct {
		name string
		view staticView
		set  Settings
	}{
		{"not synced", staticView{synced: false, asOf: scrapeTime, leases: edgeCaseLeases()}, Settings{}},
		{"edge cases", staticView{synced: true, asOf: scrapeTime, leases: edgeCaseLeases()}, Settings{}},
		{"stale view", staticView{synced: true, asOf: scrapeTime.Add(-time.Minute), leases: edgeCaseLeases()}, Settings{}},
		{"many", benchView(3000), Settings{}},
		{"extended", benchView(300), Settings{Extended: true}},
		{"extended edge cases", staticView{synced: true, asOf: scrapeTime, leases: edgeCaseLeases()}, Settings{Extended: true}},
		{"per-lease node heartbeats", benchView(300), Settings{PerLeaseNodeHeartbeats: true}},
		{"every family, edge cases", staticView{synced: true, asOf: scrapeTime, leases: edgeCaseLeases()}, Settings{Extended: true, PerLeaseNodeHeartbeats: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.set.Now = clock
			self := prometheus.NewPedanticRegistry()
			self.MustRegister(NewStatus(tc.view, Settings{Now: clock}), collectors.NewBuildInfoCollector())
			want := exposition(t, NewStatus(tc.view, Settings{Now: clock}), collectors.NewBuildInfoCollector(), New(tc.view, tc.set))
			mfs, err := self.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := NewTextWriter(tc.view, tc.set).Write(&got, mfs); err != nil {
				t.Fatal(err)
			}
			if got.String() != want {
				t.Fatalf("fast path differs from client_golang:\n%s", firstDiff(got.String(), want))
			}
		})
	}
}

// edgeCaseLeases covers every omission rule and every escaping rule of the text format.
func edgeCaseLeases() []*lock.Lease {
	ls := []*coordinationv1.Lease{
		lease("team-a", "ctrl", held(`pod "quoted" \ back`+"\nslash", 2*time.Second, 15), transitions(3)),
		lease("team-a", "b-released", held("", 30*time.Second, 15), transitions(7)),
		lease("kube-node-lease", "node-1", held("node-1", 5*time.Second, 40)),
		lease("kube-node-lease", "node-late", held("node-late", 30*time.Second, 40)),
		lease("kube-node-lease", "node-dead", held("node-dead", time.Hour, 40)),
		lease("team-c", "empty"),
		lease("team-c", "future", held("ünïcödé-holder", -time.Hour, 0)),
		lease("kube-system", "apiserver-x", held("apiserver-x_1", time.Second, 3600), func(l *coordinationv1.Lease) {
			l.Labels = map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver"}
		}),
		lease("kube-system", "kube-scheduler", held("b", time.Second, 15), func(l *coordinationv1.Lease) {
			s, p := coordinationv1.OldestEmulationVersion, "a"
			l.Spec.Strategy, l.Spec.PreferredHolder = &s, &p
			a := metav1.NewMicroTime(time.Unix(0, 0))
			l.Spec.AcquireTime = &a
		}),
		lease("team-b", "ctrl", held("pod-1", 1500*time.Millisecond, 15)),
		// Only a hand-made object has these, but the writer must escape them as client_golang
		// does (the API server's names never need it: lock.Lease.PlainKey).
		lease(`team-"d"`, "we\\ird\nname", held("x", time.Second, 15)),
		// Sample values either side of where 'g' switches to an exponent, as integers do.
		lease("team-e", "six-digits", held("y", time.Second, 999_999), transitions(999_999)),
		lease("team-e", "seven-digits", held("y", time.Second, 1_000_000), transitions(1_000_000)),
	}
	out := make([]*lock.Lease, len(ls))
	for i, l := range ls {
		out[i] = lock.Project(l)
		out[i].ObservedHolderChanges = uint32(i)
		out[i].FirstSeen = scrapeTime.UnixMicro()
	}
	return out
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "line " + itoa(i+1) + "\n  fast:          " + g[i] + "\n  client_golang: " + w[i]
		}
	}
	return "lengths differ: fast " + itoa(len(g)) + " lines, client_golang " + itoa(len(w))
}

func itoa(i int) string { return strconv.Itoa(i) }
