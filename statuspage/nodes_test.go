package statuspage

import (
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// nodeFixture: 60 kubelets (40 s leases), judged at now: 55 renewed 5 s ago (on time), one
// 25 s ago (lagging: past half its lease), one 50 s ago (expired 10 s ago), one 3 minutes ago,
// two whose record never had a renewTime (expired); and one election.
func nodeFixture(t *testing.T) *Handler {
	t.Helper()
	o := fake.NewObserver(lock.DefaultHistory)
	now := t0.Add(time.Hour)
	var leases []*lock.Lease
	node := func(name string, age time.Duration, renewed bool) {
		l := lease("kube-node-lease", name, "u-"+name, 1, name, now.Add(-age), t0)
		l.Spec.LeaseDurationSeconds = ptr(int32(40))
		if !renewed {
			l.Spec.RenewTime = nil
		}
		leases = append(leases, o.Observe(l, now.Add(-age), true))
	}
	for i := range 55 {
		node(fmt.Sprintf("node-%02d", i), 5*time.Second, true)
	}
	node("node-slow", 25*time.Second, true)
	node("node-late", 50*time.Second, true)
	node("node-gone", 3*time.Minute, true)
	node("node-new-a", time.Minute, false)
	node("node-new-b", time.Minute, false)
	leases = append(leases, o.Observe(lease("orders", "worker", "u-w", 1, "w-0", now.Add(-time.Second), now.Add(-time.Second)), now.Add(-time.Second), true))
	return New(view{leases: leases, synced: true}, slog.New(slog.DiscardHandler), func() time.Time { return now })
}

// The list page sums the node heartbeats up in lease_class_locks' four standings: how many
// stand where, the overdue ones (not on time) most overdue first with how long past their
// expiry, and a histogram of renew ages whose bars are red where a heartbeat counted in them
// is overdue by its own lease; its table keeps them out unless their class is asked for.
func TestListPageSumsUpNodeHeartbeats(t *testing.T) {
	h := nodeFixture(t)
	_, page := get(t, h, "/leases")
	for _, want := range []string{
		`<span id="nodes-total">60</span> heartbeats`,
		`<span id="nodes-on_time" class="ok">55 on_time</span>`,
		`<span id="nodes-lagging" class="bad">1 lagging</span>`,
		`<span id="nodes-expired" class="bad">4 expired</span>`,
		`<span id="nodes-released" class="muted">0 released</span>`,
		`href="/leases?class=node-heartbeat&amp;unhealthy=1">only the unhealthy ones</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the summary lacks %s", want)
		}
	}
	overdue := regexp.MustCompile(`<tr class="unhealthy"><td><a href="/leases/kube-node-lease/([^"]+)">[^<]+</a></td><td[^>]*>[^<]*</td><td>([^<]*)</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td></tr>`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, m := range overdue {
		got = append(got, strings.Join(m[1:], " "))
	}
	want := "node-new-a expired never renewed ,node-new-b expired never renewed ,node-gone expired 3m0s 2m20s,node-late expired 50.0s 10.0s,node-slow lagging 25.0s "
	if strings.Join(got, ",") != want {
		t.Errorf("overdue heartbeats %q, want %q (never renewed first, then the most overdue, past expiry by age minus 40 s)", strings.Join(got, ","), want)
	}
	var buckets []string
	for _, m := range regexp.MustCompile(`<g class="bucket( overdue)?"><title>([^<]+)</title>`).FindAllStringSubmatch(page, -1) {
		buckets = append(buckets, m[2]+map[bool]string{true: " (red)", false: ""}[m[1] != ""])
	}
	wantBuckets := "55 renewed 0s to 10s ago, 0 renewed 10s to 20s ago, 1 renewed 20s to 30s ago, 1 of them overdue (red), 0 renewed 30s to 40s ago, " +
		"1 renewed 40s to 1m ago, 1 of them overdue (red), 0 renewed 1m to 2m ago, 1 renewed 2m to 5m ago, 1 of them overdue (red), 0 renewed 5m to 15m ago, " +
		"0 renewed 15m to 1h ago, 0 renewed over 1h ago, 2 never renewed (red)"
	if strings.Join(buckets, ", ") != wantBuckets {
		t.Errorf("histogram buckets:\n%s\nwant\n%s", strings.Join(buckets, ", "), wantBuckets)
	}
	if strings.Contains(page, `data-namespace="kube-node-lease"`) {
		t.Error("the default table lists node heartbeats")
	}
	_, page = get(t, h, "/leases?class=node-heartbeat")
	if n := strings.Count(page, `<tr class="healthy" data-namespace="kube-node-lease"`) + strings.Count(page, `<tr class="unhealthy" data-namespace="kube-node-lease"`); n != 60 {
		t.Errorf("?class=node-heartbeat lists %d heartbeats, want 60", n)
	}
	if _, page = get(t, h, "/leases?class=leader-election"); strings.Contains(page, `id="nodes"`) {
		t.Error("the leader-election list sums up node heartbeats")
	}
}

// Past maxOverdueNodes, the page lists the most overdue and says how many it left out.
func TestOverdueNodeHeartbeatsAreBounded(t *testing.T) {
	o := fake.NewObserver(lock.DefaultHistory)
	now := t0.Add(time.Hour)
	var leases []*lock.Lease
	for i := range maxOverdueNodes + 7 {
		age := time.Minute + time.Duration(i)*time.Second
		leases = append(leases, o.Observe(lease("kube-node-lease", fmt.Sprintf("n%03d", i), fmt.Sprint(i), 1, "h", now.Add(-age), t0), now.Add(-age), true))
	}
	h := New(view{leases: leases, synced: true}, slog.New(slog.DiscardHandler), func() time.Time { return now })
	_, page := get(t, h, "/leases")
	if n := strings.Count(page, `<tr class="unhealthy"><td><a href="/leases/kube-node-lease/`); n != maxOverdueNodes {
		t.Errorf("%d overdue heartbeats listed, want %d", n, maxOverdueNodes)
	}
	if !strings.Contains(page, fmt.Sprintf("The %d most overdue of %d", maxOverdueNodes, maxOverdueNodes+7)) || strings.Contains(page, `/kube-node-lease/n000"`) {
		t.Error("the cut list does not say so, or keeps the least overdue")
	}
}

// The JSON list carries the summary the page draws: the same standings, counts and buckets.
func TestListJSONSumsUpNodeHeartbeats(t *testing.T) {
	l := getJSON[api.List](t, nodeFixture(t), "/api/v1/leases")
	n := l.NodeHeartbeats
	if n == nil || n.Total != 60 || n.Overdue != 5 || n.NeverRenewed != 2 || len(n.RenewAgeBuckets) != 10 {
		t.Fatalf("node_heartbeats %+v, want 60, 5 overdue, 2 never renewed, 10 buckets", n)
	}
	if want := map[string]int{"on_time": 55, "lagging": 1, "expired": 4, "released": 0}; !maps.Equal(n.Standings, want) {
		t.Errorf("standings %v, want %v", n.Standings, want)
	}
	var got []string
	for _, b := range n.RenewAgeBuckets {
		le := "+Inf"
		if b.LeSeconds != nil {
			le = fmt.Sprint(*b.LeSeconds)
		}
		got = append(got, fmt.Sprintf("%s:%d", le, b.Count))
	}
	if want := "10:55 20:0 30:1 40:0 60:1 120:0 300:1 900:0 3600:0 +Inf:0"; strings.Join(got, " ") != want {
		t.Errorf("buckets %q, want %q", strings.Join(got, " "), want)
	}
	if l := getJSON[api.List](t, nodeFixture(t), "/api/v1/leases?class=leader-election"); l.NodeHeartbeats != nil {
		t.Errorf("the leader-election list sums up node heartbeats: %+v", l.NodeHeartbeats)
	}
}
