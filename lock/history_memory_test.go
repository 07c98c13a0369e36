package lock

import (
	"fmt"
	"testing"
	"time"
	"unsafe"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What a lock's history costs in memory: these tests look inside the records, so they observe
// them here, through Observation, with the liveness a store would pass (informer's store
// tests cover how it decides that; its history tests, the tenures it produces).

var memHistory = HistoryOptions{Tenures: 4, Renewals: 3, Classes: []Class{ClassLeaderElection}}

// observations caches records by key as a store does, observed at the exporter time now.
type observations struct {
	observe func(prev, l *Lease, now int64, live bool) *Lease
	now     time.Time
	last    map[string]*Lease
	rv      int
}

func newObservations(opts HistoryOptions) *observations {
	return &observations{observe: Observation(opts).Records(), now: t0, last: map[string]*Lease{}}
}

func (o *observations) at(d time.Duration) *observations { o.now = t0.Add(d); return o }

// see observes l at now, live as on an open watch past its replay, else as in a list.
func (o *observations) see(l *coordinationv1.Lease, live bool) *Lease {
	r := Project(l)
	rec := o.observe(o.last[r.key], r, o.now.UnixMicro(), live)
	o.last[r.key] = rec
	return rec
}

// list observes a list of ls, as the initial list or a relist.
func (o *observations) list(ls ...*coordinationv1.Lease) {
	for _, l := range ls {
		o.see(l, false)
	}
}

// write is a write of "ns/l" by holder at exporter time at (renewTime = at), acquired at
// acquired, as a client-go elector writes it; rv counts the writes.
func (o *observations) write(holder string, at, acquired time.Duration) *coordinationv1.Lease {
	o.rv++
	l := rawLease("u1", fmt.Sprint(o.rv), holder, t0.Add(at))
	a := metav1.NewMicroTime(t0.Add(acquired))
	l.Spec.AcquireTime = &a
	return l
}

// live observes holder's write at at on the open watch.
func (o *observations) live(holder string, at, acquired time.Duration) *Lease {
	return o.at(at).see(o.write(holder, at, acquired), true)
}

func memSec(d time.Duration) int64 { return t0.Add(d).UnixMicro() }

// The tenure ring never grows past its bound, however many holders come and go.
func TestHistoryRingCapacityIsBounded(t *testing.T) {
	o := newObservations(memHistory)
	o.live("a", 2*time.Second, 2*time.Second)
	at := 2 * time.Second
	for i := range 10 {
		at += time.Second
		o.live(fmt.Sprintf("h%d", i), at, at)
	}
	for i := range 5 {
		at += time.Duration(i+1) * time.Second
		o.live("h9", at, 12*time.Second)
	}
	if c := cap(o.last["ns/l"].History().tenures); c > memHistory.Tenures {
		t.Fatalf("tenure ring grew to capacity %d past its bound %d", c, memHistory.Tenures)
	}
}

// A lock found in the initial list keeps no History of its own: every such lock shares one
// rareFields whose History holds nothing, and History builds the tenure its record says.
// Observing it allocates nothing beyond what the record without history allocates. A relist
// showing it unchanged, or showing a renewal its record explains, keeps it that way; its
// first renewal seen live allocates its own History, which then goes on from that tenure.
func TestHistoryListedLockAllocatesNothingUntilItChanges(t *testing.T) {
	o := newObservations(memHistory)
	other := rawLease("u2", "1", "b", t0)
	other.Name = "other"
	o.at(3*time.Second).list(o.write("a", 2*time.Second, time.Second), other)
	l, ot := o.last["ns/l"], o.last["ns/other"]
	if l.rare == nil || !l.rare.history.inRecord || l.rare != ot.rare {
		t.Fatalf("listed locks carry rare fields %+v and %+v, want one shared, holding no history of their own", l.rare, ot.rare)
	}
	want := HistorySnapshot{Tenures: []Tenure{{Holder: "a", From: memSec(time.Second), LastRenew: memSec(2 * time.Second)}}}
	if got := l.History().Snapshot(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("history of a listed lock %+v, want its record's tenure %+v", got, want)
	}

	obs, rec := Observation(memHistory), Project(o.write("a", 4*time.Second, time.Second))
	if allocs := testing.AllocsPerRun(100, func() { rec.rare = nil; obs(nil, rec, memSec(5*time.Second), false) }); allocs != 0 {
		t.Fatalf("observing a listed lock with history allocates %v times, want 0", allocs)
	}

	o.at(8*time.Second).list(o.write("a", 6*time.Second, time.Second), other)
	if l := o.last["ns/l"]; !l.rare.history.inRecord {
		t.Fatal("a relist showing a renewal by the same holder allocated a history")
	}
	l = o.live("a", 10*time.Second, time.Second)
	if l.rare.history.inRecord || l.rare == ot.rare {
		t.Fatal("a renewal seen live left the lock without a history of its own")
	}
	want.Tenures[0].LastRenew = memSec(10 * time.Second)
	if got := l.History().Snapshot(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("history after the first live renewal %+v, want %+v", got, want)
	}
	if got := o.live("a", 12*time.Second, time.Second).History().Snapshot().RenewalIntervals; fmt.Sprint(got) != "[2000]" {
		t.Fatalf("renewal intervals %v after two live renewals, want [2000]", got)
	}
}

// Renewals of a lock whose only rare field is its history share one rareFields and one
// holder string: history costs no allocation per renewal.
func TestHistoryRenewalsShareRecordFields(t *testing.T) {
	o := newObservations(memHistory)
	o.live("a", 2*time.Second, 2*time.Second)
	prev := o.live("a", 4*time.Second, 2*time.Second)
	next := o.live("a", 6*time.Second, 2*time.Second)
	if prev == next || prev.rare != next.rare {
		t.Fatal("a renewal allocated new rare fields for the history")
	}
	if unsafe.StringData(next.Holder) != unsafe.StringData(next.History().tenures[0].Holder) {
		t.Fatal("the record and its tenure hold two copies of the holder")
	}
}

// A listed lock's last holder change comes from its record, without building the history the
// list page would otherwise allocate per lock, and agrees with that history's newest tenure.
func TestLastHolderChangeOfListedLockAgreesWithItsHistory(t *testing.T) {
	o := newObservations(memHistory)
	released := rawLease("u2", "1", "", t0)
	released.Name = "released"
	o.at(3*time.Second).list(o.write("a", 2*time.Second, time.Second), released)
	l, r := o.last["ns/l"], o.last["ns/released"]
	if !l.rare.history.inRecord {
		t.Fatal("the listed lock has a history of its own; this test needs one its record says")
	}
	tenures := l.History().Snapshot().Tenures
	if got, want := l.LastHolderChange(), tenures[len(tenures)-1].From; got != want || got != memSec(time.Second) {
		t.Fatalf("last holder change %d, want %d, the start of its record's tenure (%d)", got, want, memSec(time.Second))
	}
	if allocs := testing.AllocsPerRun(100, func() { l.LastHolderChange() }); allocs != 0 {
		t.Fatalf("LastHolderChange of a listed lock allocates %v times, want 0", allocs)
	}
	if got := r.LastHolderChange(); got != 0 {
		t.Fatalf("last holder change of a listed lock with no holder %d, want 0 (no tenure)", got)
	}
}
