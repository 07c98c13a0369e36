package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

// historyTolerance is how far the history's times may be from the real ones: the exporter
// stamps what it receives, read in watch batches (250 ms), and the test reads the electors'
// state by polling.
const historyTolerance = 2 * time.Second

// leaseDetail is the documented JSON of GET /api/v1/leases/{namespace}/{name}
// (docs/status-page.md), spelled out here so that renaming a field fails this test.
type leaseDetail struct {
	Holder  string `json:"holder"`
	Held    bool   `json:"held"`
	Kind    string `json:"kind"`
	Class   string `json:"class"`
	History *struct {
		Tenures []struct {
			Holder           string     `json:"holder"`
			From             time.Time  `json:"from"`
			To               *time.Time `json:"to"`
			LastRenew        time.Time  `json:"last_renew"`
			Ended            string     `json:"ended"`
			SeenLive         bool       `json:"seen_live"`
			Rebuilt          bool       `json:"rebuilt"`
			GapBeforeSeconds *float64   `json:"gap_before_seconds"`
		} `json:"tenures"`
		RenewalIntervalsSeconds []float64 `json:"renewal_intervals_seconds"`
	} `json:"history"`
}

func getDetail(t *testing.T, base, ns, name string) (leaseDetail, string, error) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/leases/" + ns + "/" + name)
	if err != nil {
		return leaseDetail{}, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return leaseDetail{}, string(body), fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	var d leaseDetail
	err = json.Unmarshal(body, &d)
	return d, string(body), err
}

// startCandidate runs one client-go elector with election.Fast timings (4 s lease, 1 s retry).
func startCandidate(t *testing.T, ns, name, identity string, release bool) *election.Candidate {
	t.Helper()
	c, err := election.Start(context.Background(), env.Client, ns, name, identity, election.Fast, release)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

func waitLeading(t *testing.T, c *election.Candidate) time.Time {
	t.Helper()
	end := time.Now().Add(deadline)
	for !c.Leading() {
		if time.Now().After(end) {
			t.Fatalf("%s never became leader", c.Identity)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Now()
}

func near(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d < -historyTolerance || d > historyTolerance {
		t.Errorf("%s: %s, real %s (off by %s, tolerance %s)", what, got.Format(time.StampMilli), want.Format(time.StampMilli), d, historyTolerance)
	}
}

// A crash failover then a graceful handoff between real client-go electors: the history in
// the JSON API shows both changes in order, the first ended expired and the second released,
// with the crash's leaderless gap, all within historyTolerance of the real timing taken from
// the API server's Lease (same host clock). The HTML detail page shows the same.
func TestHistoryShowsCrashFailoverAndHandoff(t *testing.T) {
	ns, name := newNamespace(t, "history"), "orders-worker"
	p := newProbe(env.exp, ns, name)
	a := startCandidate(t, ns, name, "worker-a", false) // crashes: stops without releasing
	waitLeading(t, a)
	b := startCandidate(t, ns, name, "worker-b", true)
	time.Sleep(3 * time.Second) // a few of a's renewals

	a.Stop()
	crashed, err := p.api()
	if err != nil || holderOf(crashed) != "worker-a" {
		t.Fatalf("after a's crash the Lease says %v (err %v), want still worker-a", holderOf(crashed), err)
	}
	lastRenew := crashed.Spec.RenewTime.Time
	expiry := lastRenew.Add(election.Fast.LeaseDuration)
	waitLeading(t, b)
	tookOver, err := p.api()
	if err != nil || holderOf(tookOver) != "worker-b" {
		t.Fatalf("b leads, the Lease says %v (err %v)", holderOf(tookOver), err)
	}
	bFrom := tookOver.Spec.AcquireTime.Time

	c := startCandidate(t, ns, name, "worker-c", true)
	time.Sleep(3 * time.Second)
	released := time.Now()
	b.Stop() // releases: holderIdentity ""
	waitLeading(t, c)
	handedOver, err := p.api()
	if err != nil || holderOf(handedOver) != "worker-c" {
		t.Fatalf("c leads, the Lease says %v (err %v)", holderOf(handedOver), err)
	}
	cFrom := handedOver.Spec.AcquireTime.Time

	var d leaseDetail
	var body string
	end := time.Now().Add(deadline)
	for {
		d, body, err = getDetail(t, env.exp.URL(), ns, name)
		if err == nil && d.History != nil && len(d.History.Tenures) == 3 && d.History.Tenures[2].Holder == "worker-c" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the history never showed a, b, c: %v\n%s", err, body)
		}
		time.Sleep(poll)
	}
	t.Logf("history: %s", body)
	h := d.History
	ta, tb, tc := h.Tenures[0], h.Tenures[1], h.Tenures[2]
	if ta.Holder != "worker-a" || ta.Ended != "expired" || tb.Holder != "worker-b" || tb.Ended != "released" || tc.Ended != "" {
		t.Fatalf("tenures (%s %q) (%s %q) (%s %q), want worker-a expired, worker-b released, worker-c holding",
			ta.Holder, ta.Ended, tb.Holder, tb.Ended, tc.Holder, tc.Ended)
	}
	// a's start may precede the shared exporter's first live second; the changes may not.
	if !tb.SeenLive || !tc.SeenLive || ta.To == nil || tb.To == nil || tc.To != nil {
		t.Fatalf("tenures not seen live or with wrong ends: %s", body)
	}
	near(t, "a's last renewal", ta.LastRenew, lastRenew)
	near(t, "a's tenure end (its lease's expiry)", *ta.To, expiry)
	near(t, "b's takeover", tb.From, bFrom)
	realGap := bFrom.Sub(expiry).Seconds()
	if tb.GapBeforeSeconds == nil || abs(*tb.GapBeforeSeconds-realGap) > historyTolerance.Seconds() {
		t.Errorf("crash gap %v s, real %.3f s (a's lease expired at %s, b took over at %s)", tb.GapBeforeSeconds, realGap,
			expiry.Format(time.StampMilli), bFrom.Format(time.StampMilli))
	}
	near(t, "b's release", *tb.To, released)
	near(t, "c's acquisition", tc.From, cFrom)
	if tc.GapBeforeSeconds == nil || *tc.GapBeforeSeconds < 0 || *tc.GapBeforeSeconds > cFrom.Sub(released).Seconds()+historyTolerance.Seconds() {
		t.Errorf("handoff gap %v s, real at most %.3f s", tc.GapBeforeSeconds, cFrom.Sub(released).Seconds())
	}
	if len(h.RenewalIntervalsSeconds) == 0 {
		t.Error("no renewal intervals after seconds of renewals every 1-2 s")
	}
	// client-go renews every RetryPeriod, and once right after acquiring.
	iv := slices.Sorted(slices.Values(h.RenewalIntervalsSeconds))
	retry := election.Fast.RetryPeriod.Seconds()
	if median := iv[len(iv)/2]; iv[0] < 0 || iv[len(iv)-1] > election.Fast.RenewDeadline.Seconds()+retry || median < retry/2 || median > 2*retry {
		t.Errorf("renewal intervals %v s, electors renew every %v s", h.RenewalIntervalsSeconds, retry)
	}

	resp, err := http.Get(env.exp.URL() + "/leases/" + ns + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"worker-a", "worker-b", "worker-c", ">expired<", ">released<", ">holding<"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("detail page lacks %q", want)
		}
	}
	if strings.Index(string(page), "worker-c") > strings.Index(string(page), "worker-a") {
		t.Error("detail page does not list the newest holder first")
	}
}

func abs(f float64) float64 { return max(f, -f) }

// A client-go leader stalled mid-renewal past its renew deadline resumes and, with
// ReleaseOnCancel, empties the Lease its successor took meanwhile; the successor takes it
// again at its next renewal. The history ends the successor's first tenure
// cleared_by_predecessor, and lease_class_successors_cleared_total counts it once; an
// exporter watching only this namespace sees nobody else's.
func TestHistoryShowsASuccessorsLeaseClearedByItsPredecessor(t *testing.T) {
	env.Shared(t)
	ns, name := newNamespace(t, "cleared"), "billing-worker"
	exp := env.StartReady(t, env.Bin, "--namespaces="+ns)
	stalled, err := election.StartStalledLeader(context.Background(), env.Client, ns, name, "worker-stalled", election.Fast)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stalled.Stop)
	p := newProbe(exp, ns, name)
	p.until(t, deadline, poll, "the first leader holds", func(m leaseMetrics) error {
		if m.holder != "worker-stalled" {
			return fmt.Errorf("holder %q", m.holder)
		}
		return nil
	})
	if err := stalled.Stall(deadline); err != nil {
		t.Fatal(err)
	}
	waitLeading(t, startCandidate(t, ns, name, "worker-successor", true))
	if err := stalled.Resume(deadline); err != nil {
		t.Fatal(err)
	}

	var d leaseDetail
	var body string
	end := time.Now().Add(deadline)
	for {
		d, body, err = getDetail(t, exp.URL(), ns, name)
		if err == nil && d.History != nil && len(d.History.Tenures) == 3 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the history never showed the stalled leader, the successor, and the successor again: %v\n%s", err, body)
		}
		time.Sleep(poll)
	}
	ts := d.History.Tenures
	if ts[0].Holder != "worker-stalled" || ts[0].Ended != "expired" || ts[1].Holder != "worker-successor" ||
		ts[1].Ended != "cleared_by_predecessor" || ts[2].Holder != "worker-successor" || ts[2].Ended != "" {
		t.Fatalf("want the stalled leader's tenure expired, the successor's cleared_by_predecessor, the successor holding again:\n%s", body)
	}
	s, err := exp.Scrape()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Series("lease_class_successors_cleared_total", map[string]string{"class": "leader-election"}); len(got) != 1 || got[0].Value != 1 {
		t.Errorf("lease_class_successors_cleared_total{class=\"leader-election\"} = %v, want one series at 1", got)
	}
	resp, err := http.Get(exp.URL() + "/leases/" + ns + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), ">cleared_by_predecessor<") {
		t.Error("the detail page does not show the cleared_by_predecessor ending")
	}
}
