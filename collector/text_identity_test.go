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

	"github.com/lease-exporter/lease-exporter/lock"
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

// The same on the informer's cache, which keeps its locks in the exposition's orders rather
// than the writer sorting them: with more locks than a walk's batch, in several classes and
// namespaces, holders changing (lease_info's order) and locks deleted after the sync.
func TestTextWriterMatchesClientGolangOnTheCache(t *testing.T) {
	objs := edgeCaseObjects()
	for i := range 2500 {
		ns := []string{"kube-node-lease", "team-a", "team-b", "kube-system"}[i%4]
		objs = append(objs, lease(ns, "lock-"+strconv.Itoa(i*7919%10007), held("pod-"+strconv.Itoa(i%13), time.Duration(i%40)*time.Second, 15)))
	}
	view, client := syncedViewWithClient(t, objs...)
	ctx := t.Context()
	for i, o := range objs[len(objs)-200:] {
		if i%2 == 0 {
			o.Spec.HolderIdentity = ptrTo("new-" + strconv.Itoa(i)) // moves in lease_info's order
			_, err := client.CoordinationV1().Leases(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		} else if err := client.CoordinationV1().Leases(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := len(objs) - 100
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, moved := 0, 0
		view.Range(func(l *lock.Lease) {
			n++
			if strings.HasPrefix(l.Holder, "new-") {
				moved++
			}
		})
		if n == want && moved == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cache has %d locks, %d with a new holder; want %d and 100", n, moved, want)
		}
	}
	clock := func() time.Time { return scrapeTime }
	for _, set := range []Settings{{}, {Extended: true, PerLeaseNodeHeartbeats: true}} {
		set.Now = clock
		self := prometheus.NewPedanticRegistry()
		self.MustRegister(NewStatus(view, Settings{Now: clock}), collectors.NewBuildInfoCollector())
		wantText := exposition(t, NewStatus(view, Settings{Now: clock}), collectors.NewBuildInfoCollector(), New(view, set))
		mfs, err := self.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := NewTextWriter(view, set).Write(&got, mfs); err != nil {
			t.Fatal(err)
		}
		if got.String() != wantText {
			t.Fatalf("fast path over the cache differs from client_golang (%+v):\n%s", set, firstDiff(got.String(), wantText))
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// edgeCaseLeases covers every omission rule and every escaping rule of the text format.
func edgeCaseLeases() []*lock.Lease {
	ls := edgeCaseObjects()
	out := make([]*lock.Lease, len(ls))
	for i, l := range ls {
		out[i] = lock.Project(l)
		out[i].ObservedHolderChanges = uint32(i)
		out[i].FirstSeen = scrapeTime.UnixMicro()
	}
	return out
}

// edgeCaseObjects are edgeCaseLeases' Leases, as the API server would serve them.
func edgeCaseObjects() []*coordinationv1.Lease {
	return []*coordinationv1.Lease{
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
