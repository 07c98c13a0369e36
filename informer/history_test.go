package informer

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/lock"
)

var testHistory = lock.HistoryOptions{Tenures: 4, Renewals: 3, Classes: []lock.Class{lock.ClassLeaderElection}}

// newHistoryJudge is a judgeClock whose store keeps history as opts say.
func newHistoryJudge(opts lock.HistoryOptions) *judgeClock {
	j := &judgeClock{now: t0}
	j.store = newStore(leaseSource{}.decode, lock.Observation(opts).Records(), nil, func() time.Time { return j.now },
		newMetrics(prometheus.NewRegistry()))
	return j
}

// elector writes the Lease "ns/l" as a client-go elector would, by exporter time: rv counts
// the writes.
type elector struct {
	j   *judgeClock
	rv  int
	uid string
}

// write is a write of holder at exporter time at (renewTime = at), acquired at acquired.
func (e *elector) write(holder string, at, acquired time.Duration) *coordinationv1.Lease {
	e.rv++
	l := rawLease(e.uid, fmt.Sprint(e.rv), holder, t0.Add(at))
	a := metav1.NewMicroTime(t0.Add(acquired))
	l.Spec.AcquireTime = &a
	return l
}

// live delivers the write on the open watch at exporter time at.
func (e *elector) live(holder string, at, acquired time.Duration) {
	_ = e.j.at(at).store.Update(e.write(holder, at, acquired))
}

func (e *elector) history(t *testing.T) lock.HistorySnapshot {
	t.Helper()
	h := e.j.lease(t).History()
	if h == nil {
		t.Fatal("the lock keeps no history")
	}
	return h.Snapshot()
}

func sec(d time.Duration) int64 { return t0.Add(d).UnixMicro() }

// startElection opens the watch at 0 and has holder a create the Lease live at 2 s and renew
// it every 2 s up to last.
func startElection(t *testing.T, opts lock.HistoryOptions, last time.Duration) *elector {
	t.Helper()
	j := newHistoryJudge(opts)
	j.openWatch()
	e := &elector{j: j, uid: "u1"}
	_ = j.at(2 * time.Second).store.Add(e.write("a", 2*time.Second, 2*time.Second))
	for at := 4 * time.Second; at <= last; at += 2 * time.Second {
		e.live("a", at, 2*time.Second)
	}
	return e
}

func wantTenure(t *testing.T, got lock.Tenure, holder string, from, lastRenew, to int64, ended lock.Ending) {
	t.Helper()
	if got.Holder != holder || got.From != from || got.LastRenew != lastRenew || got.To != to || got.Ended != ended {
		t.Fatalf("tenure %+v, want holder %q from %d last renew %d to %d ended %q", got, holder, from, lastRenew, to, ended)
	}
}

// A crash: a stops renewing after 10 s, its 15 s lease expires at 25 s, b takes over at 27 s.
// a's tenure ended expired at 25 s, the leaderless gap is 2 s, the cadence is 2 s.
func TestHistoryCrashFailoverEndsExpired(t *testing.T) {
	e := startElection(t, testHistory, 10*time.Second)
	e.live("b", 27*time.Second, 27*time.Second)
	h := e.history(t)
	if len(h.Tenures) != 2 {
		t.Fatalf("%d tenures, want 2: %+v", len(h.Tenures), h.Tenures)
	}
	wantTenure(t, h.Tenures[0], "a", sec(2*time.Second), sec(10*time.Second), sec(25*time.Second), lock.Expired)
	wantTenure(t, h.Tenures[1], "b", sec(27*time.Second), sec(27*time.Second), 0, lock.Holding)
	if !h.Tenures[0].Live || !h.Tenures[1].Live {
		t.Fatal("tenures seen live on the watch are not marked live")
	}
	if want := []uint32{2000, 2000, 2000}; fmt.Sprint(h.RenewalIntervals) != fmt.Sprint(want) {
		t.Fatalf("renewal intervals %v, want the last 3 of a's 2 s cadence %v", h.RenewalIntervals, want)
	}
}

// A graceful handoff: a releases at 10 s (holder ""), b acquires at 11 s.
func TestHistoryGracefulHandoffEndsReleased(t *testing.T) {
	e := startElection(t, testHistory, 8*time.Second)
	e.live("", 10*time.Second, 10*time.Second)
	e.live("b", 11*time.Second, 11*time.Second)
	h := e.history(t)
	if len(h.Tenures) != 2 {
		t.Fatalf("%d tenures, want 2: %+v", len(h.Tenures), h.Tenures)
	}
	wantTenure(t, h.Tenures[0], "a", sec(2*time.Second), sec(10*time.Second), sec(10*time.Second), lock.Released)
	wantTenure(t, h.Tenures[1], "b", sec(11*time.Second), sec(11*time.Second), 0, lock.Holding)
}

// b writes itself in at 5 s while a's lease is valid until 19 s: taken over, no gap.
func TestHistoryTakeoverOfValidLease(t *testing.T) {
	e := startElection(t, testHistory, 4*time.Second)
	e.live("b", 5*time.Second, 5*time.Second)
	h := e.history(t)
	wantTenure(t, h.Tenures[0], "a", sec(2*time.Second), sec(4*time.Second), sec(5*time.Second), lock.TakenOver)
}

// A takeover within expiryTolerance of the expiry the exporter computed is an expiry: the
// elector saw the last renewal a little earlier than the exporter.
func TestHistoryTakeoverJustBeforeExpiryIsExpiry(t *testing.T) {
	e := startElection(t, testHistory, 10*time.Second)
	e.live("b", 24500*time.Millisecond, 24500*time.Millisecond)
	if got := e.history(t).Tenures[0]; got.Ended != lock.Expired || got.To != sec(24500*time.Millisecond) {
		t.Fatalf("tenure %+v, want expired, ended at the takeover", got)
	}
}

// The same holder renewing again after its lease had expired (a long pause): a's first
// tenure ended expired, a leaderless gap, then a second tenure of a.
func TestHistorySameHolderBackAfterExpiry(t *testing.T) {
	e := startElection(t, testHistory, 10*time.Second)
	e.live("a", 40*time.Second, 2*time.Second)
	h := e.history(t)
	if len(h.Tenures) != 2 {
		t.Fatalf("%d tenures, want 2: %+v", len(h.Tenures), h.Tenures)
	}
	wantTenure(t, h.Tenures[0], "a", sec(2*time.Second), sec(10*time.Second), sec(25*time.Second), lock.Expired)
	wantTenure(t, h.Tenures[1], "a", sec(40*time.Second), sec(40*time.Second), 0, lock.Holding)
}

// The rings keep the newest Tenures tenures and Renewals intervals, oldest first.
func TestHistoryRingsAreBounded(t *testing.T) {
	e := startElection(t, testHistory, 2*time.Second)
	at := 2 * time.Second
	for i := range 10 {
		at += time.Second
		e.live(fmt.Sprintf("h%d", i), at, at)
	}
	for i := range 5 { // h9 renews at growing intervals: 1, 2, 3, 4, 5 s
		at += time.Duration(i+1) * time.Second
		e.live("h9", at, 12*time.Second)
	}
	h := e.history(t)
	var holders []string
	for _, tn := range h.Tenures {
		holders = append(holders, tn.Holder)
	}
	if fmt.Sprint(holders) != "[h6 h7 h8 h9]" {
		t.Fatalf("tenures %v, want the newest 4 [h6 h7 h8 h9]", holders)
	}
	if fmt.Sprint(h.RenewalIntervals) != "[3000 4000 5000]" {
		t.Fatalf("renewal intervals %v, want the newest 3 [3000 4000 5000]", h.RenewalIntervals)
	}
}

// A deleted and recreated Lease (new UID), seen in a relist, starts a new history.
func TestHistoryRecreatedLeaseStartsOver(t *testing.T) {
	e := startElection(t, testHistory, 4*time.Second)
	e.live("b", 5*time.Second, 5*time.Second)
	e.j.closeWatch()
	e.uid = "u2"
	e.j.at(30 * time.Second)
	_ = e.j.store.Replace([]any{e.write("c", 29*time.Second, 29*time.Second)}, "")
	h := e.history(t)
	if len(h.Tenures) != 1 || h.Tenures[0].Holder != "c" || h.Tenures[0].Live {
		t.Fatalf("tenures of the recreated Lease %+v, want only c's, not seen live", h.Tenures)
	}
}

// A relist returning what the cache has changes nothing; one returning a renewal by the same
// holder adds no tenure and no renewal interval (it was not seen when it happened); one
// returning another holder adds one tenure, not seen live, of unknown ending.
func TestHistoryRelistsDoNotInventChanges(t *testing.T) {
	e := startElection(t, testHistory, 6*time.Second)
	before := e.history(t)
	e.j.closeWatch()
	same := e.write("a", 6*time.Second, 2*time.Second)
	same.ResourceVersion = fmt.Sprint(e.rv - 1) // the last write again
	_ = e.j.at(7*time.Second).store.Replace([]any{same}, "")
	_ = e.j.at(8*time.Second).store.Replace([]any{e.write("a", 8*time.Second, 2*time.Second)}, "")
	h := e.history(t)
	if fmt.Sprint(h) != fmt.Sprint(lock.HistorySnapshot{Tenures: []lock.Tenure{{Holder: "a", From: sec(2 * time.Second), LastRenew: sec(8 * time.Second), To: 0, Ended: lock.Holding, Live: true}},
		RenewalIntervals: before.RenewalIntervals}) {
		t.Fatalf("after relists of a's renewals: %+v (before %+v)", h, before)
	}
	_ = e.j.at(12*time.Second).store.Replace([]any{e.write("b", 11*time.Second, 10*time.Second)}, "")
	_ = e.j.at(13*time.Second).store.Replace([]any{e.write("b", 11*time.Second, 10*time.Second)}, "")
	h = e.history(t)
	if len(h.Tenures) != 2 {
		t.Fatalf("%d tenures after relists showing one change, want 2: %+v", len(h.Tenures), h.Tenures)
	}
	wantTenure(t, h.Tenures[0], "a", sec(2*time.Second), sec(8*time.Second), sec(10*time.Second), lock.Unknown)
	if b := h.Tenures[1]; b.Holder != "b" || b.From != sec(10*time.Second) || b.Live {
		t.Fatalf("b's tenure %+v, want from its acquireTime 10 s, not live", b)
	}
}

// Only the configured classes keep history: node heartbeats do not by default, and a
// history of size 0 is no history at all.
func TestHistoryOnlyForConfiguredClasses(t *testing.T) {
	node := rawLease("u1", "1", "n", t0)
	node.Namespace = "kube-node-lease"
	for _, tc := range []struct {
		name  string
		opts  lock.HistoryOptions
		lease *coordinationv1.Lease
		keeps bool
	}{
		{"leader election", testHistory, rawLease("u1", "1", "a", t0), true},
		{"node heartbeat", testHistory, node, false},
		{"disabled", lock.HistoryOptions{Tenures: 0, Renewals: 3, Classes: testHistory.Classes}, rawLease("u1", "1", "a", t0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newHistoryJudge(tc.opts)
			_ = j.store.Add(tc.lease)
			got := j.store.list(nil)[0]
			if keeps := got.History() != nil; keeps != tc.keeps {
				t.Fatalf("keeps history: %v, want %v", keeps, tc.keeps)
			}
		})
	}
}

// preferring writes the record a coordinated election's API server writes when it comes to
// prefer another candidate: a's record, renewed at renewed, naming preferred.
func (e *elector) preferring(holder string, renewed, acquired time.Duration, preferred string) *coordinationv1.Lease {
	l := e.write(holder, renewed, acquired)
	strategy := coordinationv1.OldestEmulationVersion
	l.Spec.Strategy = &strategy
	l.Spec.PreferredHolder = &preferred
	return l
}

// A coordinated election's handover: at 11 s the API server prefers b. a yields (stops
// renewing, its lease running out at 25 s) or releases at 12 s, writing, as client-go does,
// a record without the preferred holder; whoever comes next, a's tenure ended handed over.
// A takeover of a's still valid lease stays a takeover.
func TestHistoryLettingGoForThePreferredHolderIsAHandover(t *testing.T) {
	for _, tc := range []struct {
		name      string
		release   bool
		next      string
		nextAt    time.Duration
		to        time.Duration
		lastRenew time.Duration
		want      lock.Ending
	}{
		{"yields", false, "b", 27 * time.Second, 25 * time.Second, 10 * time.Second, lock.HandedOver},
		{"releases", true, "b", 27 * time.Second, 12 * time.Second, 12 * time.Second, lock.HandedOver},
		{"yields, another comes", false, "c", 27 * time.Second, 25 * time.Second, 10 * time.Second, lock.HandedOver},
		{"taken over while valid", false, "c", 13 * time.Second, 13 * time.Second, 10 * time.Second, lock.TakenOver},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startElection(t, testHistory, 10*time.Second)
			_ = e.j.at(11 * time.Second).store.Update(e.preferring("a", 10*time.Second, 2*time.Second, "b"))
			if tc.release {
				e.live("", 12*time.Second, 12*time.Second)
			}
			e.live(tc.next, tc.nextAt, tc.nextAt)
			h := e.history(t)
			if len(h.Tenures) != 2 {
				t.Fatalf("%d tenures, want 2: %+v", len(h.Tenures), h.Tenures)
			}
			wantTenure(t, h.Tenures[0], "a", sec(2*time.Second), sec(tc.lastRenew), sec(tc.to), tc.want)
			wantTenure(t, h.Tenures[1], tc.next, sec(tc.nextAt), sec(tc.nextAt), 0, lock.Holding)
		})
	}
	// Without a preferred holder, the same release is a release.
	e := startElection(t, testHistory, 10*time.Second)
	e.live("", 12*time.Second, 12*time.Second)
	if got := e.history(t).Tenures[0].Ended; got != lock.Released {
		t.Errorf("a release with no preferred holder ended %v", got)
	}
}
