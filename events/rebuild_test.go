package events

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/lease-exporter/lease-exporter/lock"
)

// Lock UIDs (the cache keeps a UID as its 16 bytes, so they must be UUIDs).
const (
	u1 = "0b7d2a8e-4c1f-4d2a-9e3b-000000000001"
	u2 = "0b7d2a8e-4c1f-4d2a-9e3b-000000000002"
	u9 = "0b7d2a8e-4c1f-4d2a-9e3b-000000000009"
)

// seen is a hand-built Seen: cached Leases and tombstones.
type seen struct {
	live  []*lock.Lease
	tombs []*lock.Tombstone
}

func (s *seen) Lookup(kind lock.Kind, namespace, name string) *lock.Lease {
	for _, l := range s.live {
		if l.Kind() == kind && l.Namespace() == namespace && l.Name() == name {
			return l
		}
	}
	return nil
}

func (s *seen) RangeDeleted(fn func(*lock.Tombstone)) {
	for _, t := range s.tombs {
		fn(t)
	}
}

func leaseRecord(ns, name, uid string) *lock.Lease {
	return lock.Project(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), ResourceVersion: "1"}})
}

// eventAbout is an Event as the exporter writes it, in ns, regarding the Lease rns/name uid.
func eventAbout(ns, rns, name, uid string, at time.Time, reason, note string) *eventsv1.Event {
	return &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s.%d", name, at.UnixNano())},
		EventTime: metav1.NewMicroTime(at), ReportingController: ReportingController, ReportingInstance: "x",
		Reason: reason, Note: note, Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "Lease", APIVersion: "coordination.k8s.io/v1", Namespace: rns, Name: name, UID: types.UID(uid)}}
}

// The rebuild takes an Event only in its lock's namespace, regarding a lock the exporter has
// seen (live or a tombstone) by kind, namespace, name and UID, with one of the exporter's
// reasons and a note of at most 1 KiB in its wording; every other is skipped and counted under
// its cause, and no forged holder reaches the history.
func TestRebuildTakesOnlyEventsItCanCheck(t *testing.T) {
	at := time.Now().Add(-time.Hour)
	changed := func(old, new string) string {
		return Change{Reason: ReasonLeaderChanged, Old: old, New: new, Held: time.Minute, Ended: lock.Released, Leaderless: 0}.Note()
	}
	forged := changed("orders-a", "forged")
	wrongKind := eventAbout("team", "team", "orders", u1, at.Add(5*time.Second), ReasonLeaderChanged, forged)
	wrongKind.Regarding.Kind = "ConfigMap"
	notOurs := eventAbout("team", "team", "orders", u1, at.Add(6*time.Second), ReasonLeaderChanged, forged)
	notOurs.ReportingController = "someone-else"
	evs := []*eventsv1.Event{
		eventAbout("team", "team", "orders", u1, at, ReasonLeaderChanged, changed("orders-a", "orders-b")),
		eventAbout("team", "team", "gone", u2, at, ReasonLeaderChanged, changed("gone-a", "gone-b")),
		eventAbout("tenant", "team", "orders", u1, at.Add(time.Second), ReasonLeaderChanged, forged),
		wrongKind,
		notOurs,
		eventAbout("team", "team", "orders", u9, at.Add(2*time.Second), ReasonLeaderChanged, forged),
		eventAbout("team", "team", "other", u1, at.Add(3*time.Second), ReasonLeaderChanged, forged),
		eventAbout("team", "team", "orders", u1, at.Add(4*time.Second), "LeaderStolen", forged),
		eventAbout("team", "team", "orders", u1, at.Add(7*time.Second), ReasonLeaderChanged,
			`Leader changed from "orders-b" to "`+strings.Repeat("f", maxNote)+`".`),
		eventAbout("team", "team", "orders", u1, at.Add(8*time.Second), ReasonLeaderChanged, "Leadership moved to forged."),
		eventAbout("team", "team", "orders", u1, at.Add(9*time.Second), ReasonLeaseDeleted, "The lock was deleted; nobody held it."),
	}
	client := fake.NewClientset()
	for _, ev := range evs {
		if err := client.Tracker().Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	s := &seen{live: []*lock.Lease{leaseRecord("team", "orders", u1)},
		tombs: []*lock.Tombstone{{Lock: leaseRecord("team", "gone", u2)}}}
	h := &History{}
	st, err := Rebuild(context.Background(), client, KnownTo(s), nil, 10, h)
	if err != nil {
		t.Fatal(err)
	}
	want := Skipped{Oversized: 1, Reason: 1, Namespace: 1, UnknownLock: 3, Unreadable: 1}
	if st.Skipped != want || st.Events != len(evs)-1 || st.Locks != 2 {
		t.Errorf("rebuild read %+v, want %d Events of 2 locks, skipped %+v", st, len(evs)-1, want)
	}
	for uid, holders := range map[string]string{u1: "orders-a orders-b", u2: "gone-a gone-b"} {
		var got []string
		for _, tn := range h.Tenures(uid) {
			got = append(got, tn.Holder)
		}
		if strings.Join(got, " ") != holders {
			t.Errorf("lock %s rebuilt with holders %v, want %s", uid, got, holders)
		}
	}
}

// However many Events one lock has, the rebuild holds its newest few (enough for the history's
// bound) and rebuilds its last tenures from them; and once it holds its byte budget, it holds
// no more changes, and counts them.
func TestRebuildHoldsBoundedChanges(t *testing.T) {
	at := time.Now().Add(-time.Hour)
	r := rebuild{known: anyLock, perLock: 4*3 + 8, budget: maxHeld, byUID: map[types.UID][]entry{}, st: &RebuildStats{}}
	for i := range 500 {
		c := Change{Reason: ReasonLeaderChanged, Old: fmt.Sprint("h", i), New: fmt.Sprint("h", i+1), Held: time.Second, Ended: lock.Released, Leaderless: 0}
		r.take(eventAbout("team", "team", "orders", u1, at.Add(time.Duration(i)*time.Second), c.Reason, c.Note()))
		if n := len(r.byUID[u1]); n >= 2*r.perLock {
			t.Fatalf("after %d Events the rebuild holds %d changes of one lock, want fewer than %d", i+1, n, 2*r.perLock)
		}
	}
	var b tenures
	for _, e := range r.compact(r.byUID[u1], len(r.byUID[u1])) {
		b.apply(e.at, e.c)
	}
	var got []string
	for _, tn := range b.last(3) {
		got = append(got, tn.Holder)
	}
	if want := []string{"h498", "h499", "h500"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("last tenures %v, want %v", got, want)
	}

	one := entry{c: Change{Old: "h1", New: "h2"}}.size()
	r = rebuild{known: anyLock, perLock: 100, budget: 10 * one, byUID: map[types.UID][]entry{}, st: &RebuildStats{}}
	for i := range 30 {
		c := Change{Reason: ReasonLeaderChanged, Old: "h1", New: "h2", Held: time.Second, Ended: lock.Released, Leaderless: 0}
		r.take(eventAbout("team", "team", fmt.Sprint("l", i), fmt.Sprintf("00000000-0000-4000-8000-%012d", i), at, c.Reason, c.Note()))
	}
	if r.held > r.budget || r.st.Skipped.OverBudget != 20 {
		t.Errorf("held %d bytes of a %d budget, %d over budget; want at most the budget and the 20 beyond it counted", r.held, r.budget, r.st.Skipped.OverBudget)
	}
}
