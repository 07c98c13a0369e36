package statuspage

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

var t0 = time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)

// view is a hand-built Source judged at now, without LeaseCandidates or deleted locks
// (candidateView and deletionsView add them).
type view struct {
	leases []*lock.Lease
	synced bool
}

func (v view) HasSynced() bool                       { return v.synced }
func (v view) JudgedAt(now time.Time) time.Time      { return now }
func (v view) WatchingCandidates() bool              { return false }
func (v view) RangeCandidates(func(*lock.Candidate)) {}
func (v view) RangeDeleted(func(*lock.Tombstone))    {}

// Snapshot and Scan make it an informer.Ordered, for the collectors the pages are compared with.
func (v view) Snapshot(nodes func(*lock.Lease) bool) informer.Snapshot {
	return fake.Snapshot(v, nodes)
}
func (v view) Scan(fn func([]*lock.Lease)) { fake.Scan(v, fn) }
func (v view) Range(fn func(*lock.Lease)) {
	for _, l := range v.leases {
		fn(l)
	}
}

// Lookup is the informer's by address; the pages must not depend on how it finds the lock.
func (v view) Lookup(kind lock.Kind, namespace, name string) *lock.Lease {
	for _, l := range v.leases {
		if l.Kind() == kind && l.Namespace() == namespace && l.Name() == name {
			return l
		}
	}
	return nil
}

// lease is a Lease written at renew by holder (15 s, acquired at acquired).
func lease(ns, name, uid string, rv int, holder string, renew, acquired time.Time) *coordinationv1.Lease {
	r, a, d := metav1.NewMicroTime(renew), metav1.NewMicroTime(acquired), int32(15)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), ResourceVersion: fmt.Sprint(rv)},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, RenewTime: &r, AcquireTime: &a},
	}
}

// election plays, through the informer's own observation, a lock whose holder a renews
// every 2 s from 0 to 10 s and crashes; its lease expires at 25 s and b takes over at 27 s
// (2 s leaderless), renews every 2 s and releases at 40 s; c acquires at 41 s and renews
// every 3 s until 50 s.
func election(o *fake.Observer, ns, name string) *lock.Lease {
	rv := 0
	var rec *lock.Lease
	write := func(holder string, at, acquired time.Duration) {
		rv++
		rec = o.Observe(lease(ns, name, "u-"+name, rv, holder, t0.Add(at), t0.Add(acquired)), t0.Add(at), true)
	}
	for at := time.Duration(0); at <= 10*time.Second; at += 2 * time.Second {
		write("a", at, 0)
	}
	for at := 27 * time.Second; at <= 39*time.Second; at += 2 * time.Second {
		write("b", at, 27*time.Second)
	}
	write("", 40*time.Second, 40*time.Second)
	for at := 41 * time.Second; at <= 50*time.Second; at += 3 * time.Second {
		write("c", at, 41*time.Second)
	}
	return rec
}

// fixture: an elected lock in "orders" (held at 51 s), an expired one in "billing", a node
// heartbeat, and a lock held by a hostile holder identity.
func fixture(t *testing.T, hostile string) (*Handler, time.Time) {
	t.Helper()
	o := fake.NewObserver(lock.DefaultHistory)
	now := t0.Add(51 * time.Second)
	leases := []*lock.Lease{
		election(o, "orders", "worker"),
		o.Observe(lease("billing", "ledger", "u-ledger", 1, "ledger-0", t0, t0), t0, true),
		o.Observe(lease("kube-node-lease", "node-1", "u-node", 1, "node-1", now.Add(-time.Second), t0), now.Add(-time.Second), true),
		o.Observe(lease("evil", "lock", "u-evil", 1, hostile, now, now), now, true),
	}
	return New(view{leases: leases, synced: true}, slog.New(slog.DiscardHandler), func() time.Time { return now }), now
}

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Result(), string(body)
}

func getJSON[T any](t *testing.T, h http.Handler, path string) T {
	t.Helper()
	resp, body := get(t, h, path)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return v
}

func names(l api.List) []string {
	var out []string
	for _, x := range l.Leases {
		out = append(out, x.Namespace+"/"+x.Name)
	}
	return out
}

// The JSON list judges each lock and filters by namespace, class and health.
func TestListJSONJudgesAndFilters(t *testing.T) {
	h, _ := fixture(t, "holder")
	for _, tc := range []struct{ query, want string }{
		{"", "[billing/ledger evil/lock kube-node-lease/node-1 orders/worker]"},
		{"?namespace=orders", "[orders/worker]"},
		{"?class=node-heartbeat", "[kube-node-lease/node-1]"},
		{"?unhealthy=1", "[billing/ledger]"},
		{"?unhealthy=true&namespace=orders", "[]"},
		{"?kind=ConfigMap", "[]"},
	} {
		if got := names(getJSON[api.List](t, h, "/api/v1/leases"+tc.query)); strings.Join(got, " ") != strings.Trim(tc.want, "[]") {
			t.Errorf("/api/v1/leases%s: %v, want %s", tc.query, got, tc.want)
		}
	}
	all := getJSON[api.List](t, h, "/api/v1/leases")
	worker, ledger := all.Leases[3], all.Leases[0]
	if !worker.Held || !worker.Healthy || worker.Holder != "c" || worker.Kind != "Lease" || worker.Class != "leader-election" ||
		*worker.RenewAgeSeconds != 1 || *worker.LeaseDurationSeconds != 15 || *worker.HolderClockSkewSeconds != 0 ||
		!worker.LastHolderChange.Equal(t0.Add(41*time.Second)) || worker.ObservedHolderChanges != 2 {
		t.Errorf("orders/worker judged %+v", worker)
	}
	if ledger.Held || ledger.Healthy || len(ledger.Problems) != 1 || ledger.Problems[0] != "not held" {
		t.Errorf("billing/ledger, expired 36 s ago, judged %+v", ledger)
	}
}

// The detail JSON carries the history: a's crash (expired, 2 s leaderless), b's release
// (1 s leaderless), c holding; the cadences of c's renewals.
func TestDetailJSONShowsHistory(t *testing.T) {
	h, _ := fixture(t, "holder")
	d := getJSON[api.Detail](t, h, "/api/v1/leases/orders/worker")
	if d.History == nil || len(d.History.Tenures) != 3 {
		t.Fatalf("history %+v, want 3 tenures", d.History)
	}
	type want struct {
		holder, ended string
		from, to      time.Duration
		gap           float64
	}
	for i, w := range []want{{"a", "expired", 0, 25 * time.Second, -1}, {"b", "released", 27 * time.Second, 40 * time.Second, 2},
		{"c", "", 41 * time.Second, -1, 1}} {
		tn := d.History.Tenures[i]
		ok := tn.Holder == w.holder && tn.Ended == w.ended && tn.From.Equal(t0.Add(w.from)) && tn.SeenLive
		ok = ok && (w.to < 0) == (tn.To == nil) && (tn.To == nil || tn.To.Equal(t0.Add(w.to)))
		ok = ok && (w.gap < 0) == (tn.GapBeforeSeconds == nil) && (tn.GapBeforeSeconds == nil || *tn.GapBeforeSeconds == w.gap)
		if !ok {
			t.Errorf("tenure %d: %+v, want %+v", i, tn, w)
		}
	}
	if got := fmt.Sprint(d.History.RenewalIntervalsSeconds); got != "[2 2 2 2 2 3 3 3]" {
		t.Errorf("renewal intervals %v, want the last 8: b's 2 s then c's 3 s (none across a change)", got)
	}
	if d.History.LeaderlessSince != nil || d.UID == "" {
		t.Errorf("held lock: leaderless since %v, uid %q", d.History.LeaderlessSince, d.UID)
	}
	node := getJSON[api.Detail](t, h, "/api/v1/leases/kube-node-lease/node-1")
	if node.History != nil {
		t.Errorf("node heartbeat has a history by default: %+v", node.History)
	}
	ledger := getJSON[api.Detail](t, h, "/api/v1/leases/billing/ledger")
	if ledger.History == nil || ledger.History.LeaderlessSince == nil || !ledger.History.LeaderlessSince.Equal(t0.Add(15*time.Second)) {
		t.Errorf("expired lock's history %+v, want leaderless since its expiry at 15 s", ledger.History)
	}
}

// Unknown locks, and known ones asked for as another kind, are 404 in JSON and HTML.
func TestUnknownLeaseIs404(t *testing.T) {
	h, _ := fixture(t, "holder")
	for _, path := range []string{"/api/v1/leases/orders/nope", "/leases/orders/nope", "/api/v1/leases/orders/worker?kind=ConfigMap",
		"/leases/orders/worker?kind=Endpoints", "/leases/nope/worker"} {
		if resp, body := get(t, h, path); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "in the exporter") {
			t.Errorf("GET %s: %d %q, want 404 saying the lock is not in the cache", path, resp.StatusCode, body)
		}
	}
	if resp, _ := get(t, h, "/leases/orders/worker?kind=Lease"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET with ?kind=Lease: %d", resp.StatusCode)
	}
}

// Until the cache has synced the list is empty and says so: a half-filled cache is never
// shown as missing leaders.
func TestListBeforeSync(t *testing.T) {
	h := New(view{synced: false, leases: []*lock.Lease{fake.NewObserver(lock.DefaultHistory).Observe(lease("a", "b", "u", 1, "x", t0, t0), t0, true)}},
		slog.New(slog.DiscardHandler), func() time.Time { return t0 })
	if l := getJSON[api.List](t, h, "/api/v1/leases"); l.Synced || len(l.Leases) != 0 {
		t.Errorf("before sync: %+v", l)
	}
	if _, body := get(t, h, "/leases"); !strings.Contains(body, "not synced yet") {
		t.Error("list page before sync does not say the cache has not synced")
	}
}

const script1 = `<script>alert("pwned")</script>`

// hostileHolder is a script tag, quotes and markup, then 10 KB of multi-byte Unicode.
func hostileHolder() string {
	return script1 + `"'><img src=x onerror=alert(1)>` + strings.Repeat("ünïcødé✓🔒", 10240/len("ünïcødé✓🔒")+1)
}

// A hostile holder identity is shown as text on both pages: no markup of it survives, and
// the whole identity is there, escaped.
func TestHostileHolderIsEscapedInHTML(t *testing.T) {
	holder := hostileHolder()
	h, _ := fixture(t, holder)
	for _, path := range []string{"/leases", "/leases/evil/lock"} {
		resp, body := get(t, h, path)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Fatalf("GET %s: %d, CSP %q", path, resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
		}
		if strings.Contains(body, script1) || strings.Contains(body, "<img") {
			t.Errorf("GET %s: the holder's markup is in the page unescaped", path)
		}
		escaped := `&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;&#34;&#39;&gt;&lt;img src=x onerror=alert(1)&gt;` + holder[len(script1)+len(`"'><img src=x onerror=alert(1)>`):]
		if !strings.Contains(body, escaped) {
			t.Errorf("GET %s: the escaped holder identity (%d bytes) is not shown whole", path, len(holder))
		}
		if n := strings.Count(body, "<script>"); n != 1 {
			t.Errorf("GET %s: %d script elements, want only the page's own", path, n)
		}
	}
}

// In JSON the holder is escaped (no <, > or & bytes) and decodes back to exactly itself.
func TestHostileHolderIsEscapedInJSON(t *testing.T) {
	holder := hostileHolder()
	h, _ := fixture(t, holder)
	resp, body := get(t, h, "/api/v1/leases/evil/lock")
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || strings.ContainsAny(body, "<>&") {
		t.Fatalf("JSON answer carries raw markup characters or may be sniffed (%q)", resp.Header.Get("X-Content-Type-Options"))
	}
	d := getJSON[api.Detail](t, h, "/api/v1/leases/evil/lock")
	if d.Holder != holder || d.History.Tenures[0].Holder != holder {
		t.Fatal("the holder identity does not decode back to itself")
	}
}

// The list page shows every lock by default, unhealthy ones first and marked; the filter
// parameters narrow it the way the form submits them.
func TestListPageFilters(t *testing.T) {
	h, _ := fixture(t, "holder")
	rows := func(body string) []string {
		var out []string
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "<tr class=") {
				out = append(out, line[len("<tr class=\""):strings.Index(line, "\" data-namespace")]+":"+
					line[strings.Index(line, "data-namespace=\"")+len("data-namespace=\""):strings.Index(line, "\" data-name=")])
			}
		}
		return out
	}
	for _, tc := range []struct{ query, want string }{
		// Node heartbeats are summed up, not listed, unless their class is asked for.
		{"", "[unhealthy:billing healthy:evil healthy:orders]"},
		{"?class=node-heartbeat", "[healthy:kube-node-lease]"},
		{"?unhealthy=1", "[unhealthy:billing]"},
		{"?class=leader-election&namespace=orders", "[healthy:orders]"},
	} {
		_, body := get(t, h, "/leases"+tc.query)
		if got := rows(body); strings.Join(got, " ") != strings.Trim(tc.want, "[]") {
			t.Errorf("/leases%s rows %v, want %s", tc.query, got, tc.want)
		}
	}
	if _, body := get(t, h, "/leases?unhealthy=1"); !strings.Contains(body, `value="1" checked`) {
		t.Error("the unhealthy-only box is not checked when the filter is on")
	}
}

// The list page shows at most maxRows rows, unhealthy first, and says how many matched.
func TestListPageIsBounded(t *testing.T) {
	o := fake.NewObserver(lock.DefaultHistory)
	now := t0.Add(time.Minute)
	var leases []*lock.Lease
	for i := range maxRows + 10 {
		renew := now // held
		if i == maxRows+5 {
			renew = t0 // expired: sorts first although it is near the end by name
		}
		leases = append(leases, o.Observe(lease("ns", fmt.Sprintf("l%05d", i), fmt.Sprint(i), 1, "h", renew, renew), renew, true))
	}
	h := New(view{leases: leases, synced: true}, slog.New(slog.DiscardHandler), func() time.Time { return now })
	_, body := get(t, h, "/leases")
	if n := strings.Count(body, "<tr class="); n != maxRows {
		t.Errorf("%d rows, want %d", n, maxRows)
	}
	if !strings.Contains(body, fmt.Sprintf("Showing the first %d of %d matching", maxRows, maxRows+10)) {
		t.Error("the page does not say it was cut")
	}
	if i := strings.Index(body, `<tr class="unhealthy"`); i < 0 || i > strings.Index(body, `<tr class="healthy"`) {
		t.Error("the expired lock is not the first row")
	}
	if l := getJSON[api.List](t, h, "/api/v1/leases"); len(l.Leases) != maxRows+10 {
		t.Errorf("JSON API returned %d locks, want all %d", len(l.Leases), maxRows+10)
	}
}

// frozenView is a view whose watch broke at frozen: the cache is known current only then.
type frozenView struct {
	view
	frozen time.Time
}

func (v frozenView) JudgedAt(now time.Time) time.Time {
	if now.After(v.frozen) {
		return v.frozen
	}
	return now
}

// While the watch is down, locks are judged as of the moment it broke, as /metrics does: a
// lock renewed just before is still held a minute later, and the page says it is stale.
func TestStaleViewIsJudgedWhenTheWatchBroke(t *testing.T) {
	o := fake.NewObserver(lock.DefaultHistory)
	l := o.Observe(lease("ns", "l", "u", 1, "h", t0, t0), t0, true)
	h := New(frozenView{view{leases: []*lock.Lease{l}, synced: true}, t0.Add(time.Second)}, slog.New(slog.DiscardHandler),
		func() time.Time { return t0.Add(time.Minute) })
	got := getJSON[api.List](t, h, "/api/v1/leases")
	if !got.Stale || !got.EvaluatedAt.Equal(t0.Add(time.Second)) || !got.Leases[0].Held || *got.Leases[0].RenewAgeSeconds != 1 {
		t.Errorf("stale view: %+v, want stale, judged at 1 s: held, renew age 1 s", got)
	}
	if _, body := get(t, h, "/leases"); !strings.Contains(body, "watch on the API server is down") {
		t.Error("the list page does not say the view is stale")
	}
}

// The detail page says when it judged the lock: the judgement's time (the view's JudgedAt),
// not one rebuilt from the renew age, which a lock without a renewTime does not have.
func TestDetailPageSaysWhenItJudged(t *testing.T) {
	o := fake.NewObserver(lock.DefaultHistory)
	renewed := o.Observe(lease("ns", "renewed", "u-1", 1, "h", t0, t0), t0, true)
	unrenewed := lease("ns", "unrenewed", "u-2", 1, "h", t0, t0)
	unrenewed.Spec.RenewTime = nil
	never := o.Observe(unrenewed, t0, true)
	leases := []*lock.Lease{renewed, never}
	for _, tc := range []struct {
		name string
		view Source
		want string
	}{
		{"current", view{leases: leases, synced: true}, "2026-11-24T03:01:00Z"},
		{"stale", frozenView{view{leases: leases, synced: true}, t0.Add(time.Second)}, "2026-11-24T03:00:01Z"},
	} {
		h := New(tc.view, slog.New(slog.DiscardHandler), func() time.Time { return t0.Add(time.Minute) })
		for _, path := range []string{"/leases/ns/renewed", "/leases/ns/unrenewed"} {
			if _, body := get(t, h, path); !strings.Contains(body, "judged at "+tc.want+")") {
				t.Errorf("%s view, %s: the page does not say it judged at %s", tc.name, path, tc.want)
			}
		}
	}
}

// TestSkewedHolderIsUnhealthyAtTheAlertThreshold checks that the page calls a held lock
// unhealthy for its holder's clock exactly where LeaseHolderClockSkew does: beyond a quarter
// of the lease duration, clamped to 2–30 s, so watch latency on a short lease is not a fault.
func TestSkewedHolderIsUnhealthyAtTheAlertThreshold(t *testing.T) {
	for _, tc := range []struct {
		duration  int32
		skew      time.Duration
		unhealthy bool
	}{
		{duration: 1, skew: -1500 * time.Millisecond, unhealthy: false}, // under the 2 s floor
		{duration: 1, skew: -2500 * time.Millisecond, unhealthy: true},
		{duration: 15, skew: 3500 * time.Millisecond, unhealthy: false}, // a quarter of 15 s is 3.75 s
		{duration: 15, skew: 4 * time.Second, unhealthy: true},
		{duration: 15, skew: -120 * time.Second, unhealthy: true},
		{duration: 3600, skew: 29 * time.Second, unhealthy: false}, // capped at 30 s
		{duration: 3600, skew: 31 * time.Second, unhealthy: true},
	} {
		o := fake.NewObserver(lock.DefaultHistory)
		// Listed first, then renewed live: the live renewal measures the skew.
		l := lease("ns", "lock", "u-lock", 1, "pod-a", t0, t0)
		l.Spec.LeaseDurationSeconds = &tc.duration
		o.Observe(l, t0, false)
		seen := t0.Add(time.Second)
		l = lease("ns", "lock", "u-lock", 2, "pod-a", seen.Add(tc.skew), t0)
		l.Spec.LeaseDurationSeconds = &tc.duration
		rec := o.Observe(l, seen, true)
		h := New(view{leases: []*lock.Lease{rec}, synced: true}, slog.New(slog.DiscardHandler), func() time.Time { return seen })
		got := getJSON[api.List](t, h, "/api/v1/leases").Leases[0]
		if !got.Held {
			t.Fatalf("duration %ds, skew %s: not held right after a live renewal: %+v", tc.duration, tc.skew, got)
		}
		if got.HolderClockSkewSeconds == nil || *got.HolderClockSkewSeconds != tc.skew.Seconds() {
			t.Fatalf("duration %ds: skew %v, want %v", tc.duration, got.HolderClockSkewSeconds, tc.skew.Seconds())
		}
		if !got.Healthy != tc.unhealthy {
			t.Errorf("duration %ds, skew %s: healthy=%v problems=%v, want unhealthy=%v", tc.duration, tc.skew, got.Healthy, got.Problems, tc.unhealthy)
		}
	}
}

// With Grafana's URL, the list links to the leases overview and each lock's page to its
// lease-detail dashboard, with the lock's variables; without, neither links.
func TestPagesLinkToGrafana(t *testing.T) {
	h, _ := fixture(t, "holder")
	if _, page := get(t, h, "/leases/orders/worker"); strings.Contains(page, `id="grafana"`) {
		t.Error("a page links to Grafana without its URL")
	}
	// The cluster of a multi-cluster Grafana rides along on every link.
	h.LinkGrafana("https://example.com/grafana/?var-cluster=prod")
	for path, want := range map[string]string{
		"/leases":               `<a id="grafana" href="https://example.com/grafana/d/lease-exporter-overview/leases-overview?var-cluster=prod">`,
		"/leases/orders/worker": `<a id="grafana" href="https://example.com/grafana/d/lease-exporter-lease-detail/lease-detail?var-cluster=prod&amp;var-lease=worker&amp;var-namespace=orders">`,
	} {
		if _, page := get(t, h, path); !strings.Contains(page, want) {
			t.Errorf("%s lacks %s", path, want)
		}
	}
}

// Under a prefix, every link of the pages is under it, and nothing else changes: the
// hostile holder is still text.
func TestPagesLinkUnderThePrefix(t *testing.T) {
	h, _ := fixture(t, hostileHolder())
	h.Under("/lx")
	for _, path := range []string{"/leases", "/leases/orders/worker", "/leases/evil/lock", "/leases/nope/nope"} {
		_, page := get(t, h, path)
		if strings.Contains(page, `href="/leases`) || strings.Contains(page, `action="/leases`) || strings.Contains(page, `href="/api`) {
			t.Errorf("%s links outside /lx", path)
		}
		if !strings.Contains(page, `href="/lx/leases"`) && !strings.Contains(page, `action="/lx/leases"`) {
			t.Errorf("%s has no link to /lx/leases", path)
		}
	}
	if _, page := get(t, h, "/leases/orders/worker"); !strings.Contains(page, `href="/lx/leases/orders/worker?window=15m"`) || !strings.Contains(page, `href="/lx/api/v1/leases/orders/worker?kind=Lease"`) {
		t.Error("the detail page's window and JSON links are not under /lx")
	}
	if _, page := get(t, h, "/leases/evil/lock"); strings.Contains(page, "<script>alert") || !strings.Contains(page, "&lt;script&gt;") {
		t.Error("the hostile holder is not escaped under the prefix")
	}
}
