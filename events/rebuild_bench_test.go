package events

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/lease-exporter/lease-exporter/lock"
)

// lockHistoryEvents are the Events one busy lock leaves within the API server's 1 h TTL
// when its history ring is full: four handovers, each a LeaseReleased and a LeaderChanged.
func lockHistoryEvents(i int, at time.Time) []*eventsv1.Event {
	uid := types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
	name := fmt.Sprintf("controller-%05d", i)
	var out []*eventsv1.Event
	for k := range 4 {
		old, next := fmt.Sprintf("%s-%d_1f0e2d3c", name, k), fmt.Sprintf("%s-%d_1f0e2d3c", name, k+1)
		t := at.Add(time.Duration(k) * 10 * time.Minute)
		for _, c := range []Change{
			{Reason: ReasonLeaseReleased, Old: old, Held: 10 * time.Minute, Ended: lock.Released, Leaderless: unknown},
			{Reason: ReasonLeaderChanged, Old: old, New: next, Held: 10 * time.Minute, Ended: lock.Released, Leaderless: 800 * time.Millisecond},
		} {
			t = t.Add(time.Second)
			out = append(out, &eventsv1.Event{
				ObjectMeta:          metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprintf("%s.%d", name, t.UnixNano())},
				EventTime:           metav1.NewMicroTime(t),
				ReportingController: ReportingController, ReportingInstance: "lease-exporter-x",
				Action: actionOf(c.Reason), Reason: c.Reason, Note: c.Note(), Type: corev1.EventTypeNormal,
				Regarding: corev1.ObjectReference{Kind: "Lease", APIVersion: "coordination.k8s.io/v1", Namespace: "team", Name: name, UID: uid},
			})
		}
	}
	return out
}

// BenchmarkRebuild10kLeaderLocks rebuilds the history of leader locks, each with a full
// ring's worth of Events (8 each), from a fake clientset: the CPU of reading them back and the
// memory the rebuilt history then keeps (retained-B/lock). locks=5000 fits the rebuild's
// budget (maxHeld): every lock is rebuilt whole. locks=10000 (80,000 Events, more than the
// exporter writes within the Events' 1 h TTL) does not: every Event is still read, what
// comes after the budget is counted OverBudget, and the memory stays bounded. The list from
// a real API server is test/integration's BenchmarkRebuildFromAPIServer.
func BenchmarkRebuild10kLeaderLocks(b *testing.B) {
	for _, locks := range []int{5_000, 10_000} {
		b.Run(fmt.Sprintf("locks=%d", locks), func(b *testing.B) { benchmarkRebuild(b, locks) })
	}
}

func benchmarkRebuild(b *testing.B, locks int) {
	client := fake.NewClientset()
	for i := range locks {
		for _, ev := range lockHistoryEvents(i, time.Now().Add(-time.Hour)) {
			if err := client.Tracker().Add(ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	var retained float64
	var st RebuildStats
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h := &History{}
		var err error
		st, err = Rebuild(context.Background(), client, anyLock, nil, lock.DefaultHistory.Tenures, h)
		whole := st.Locks == locks && st.Tenures == locks*lock.DefaultHistory.Tenures && st.Skipped.OverBudget == 0
		bounded := st.Skipped.OverBudget > 0 && st.Locks < locks
		if err != nil || st.Events != 8*locks || !whole && !bounded {
			b.Fatalf("rebuilt %+v, %v: want every Event read, and every lock rebuilt whole or the rest counted over budget", st, err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		retained = float64(after.HeapAlloc-before.HeapAlloc) / float64(st.Locks)
		runtime.KeepAlive(h)
	}
	b.ReportMetric(retained, "retained-B/lock")
	b.ReportMetric(float64(st.Locks), "locks-rebuilt")
}
