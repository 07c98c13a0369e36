package integration_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lease-exporter/lease-exporter/events"
	"github.com/lease-exporter/lease-exporter/lock"
)

// BenchmarkRebuildFromAPIServer times the history's rebuild at start at scale: 10,000 leader
// locks, each with a full ring's worth of the exporter's Events within the API server's 1 h
// TTL (four handovers: 80,000 Events), listed by reportingController from a real API server.
// The rebuild runs beside the informer's sync and does not delay readiness; this is how long
// after start the rebuilt history appears. Run it alone:
//
//	go test ./test/integration -run '^$' -bench BenchmarkRebuildFromAPIServer -benchtime 3x
func BenchmarkRebuildFromAPIServer(b *testing.B) {
	const locks = 10_000
	ctx := context.Background()
	ns, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rebuild-"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	work := make(chan *eventsv1.Event, 1024)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for range 32 {
		wg.Go(func() {
			for ev := range work {
				if _, err := env.Client.EventsV1().Events(ns.Name).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		})
	}
	start := time.Now()
	at := time.Now().Add(-50 * time.Minute)
	for i := range locks {
		uid := types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		name := fmt.Sprintf("controller-%05d", i)
		for k := range 4 {
			old, next := fmt.Sprintf("%s-%d_1f0e2d3c", name, k), fmt.Sprintf("%s-%d_1f0e2d3c", name, k+1)
			t := at.Add(time.Duration(k) * 10 * time.Minute)
			for j, c := range []events.Change{
				{Reason: events.ReasonLeaseReleased, Old: old, Held: 10 * time.Minute, Ended: lock.Released, Leaderless: -1},
				{Reason: events.ReasonLeaderChanged, Old: old, New: next, Held: 10 * time.Minute, Ended: lock.Released, Leaderless: 800 * time.Millisecond},
			} {
				t := t.Add(time.Duration(j) * time.Second)
				work <- &eventsv1.Event{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%d", name, t.UnixNano())}, EventTime: metav1.NewMicroTime(t),
					ReportingController: events.ReportingController, ReportingInstance: "lease-exporter-bench", Action: "Observed",
					Reason: c.Reason, Note: c.Note(), Type: corev1.EventTypeNormal,
					Regarding: corev1.ObjectReference{Kind: "Lease", APIVersion: "coordination.k8s.io/v1", Namespace: ns.Name, Name: name, UID: uid},
				}
			}
		}
	}
	close(work)
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	b.Logf("created %d Events in %s", locks*8, time.Since(start).Round(time.Second))
	for b.Loop() {
		h := &events.History{}
		st, err := events.Rebuild(ctx, env.Client, anyLock, nil, lock.DefaultHistory.Tenures, h)
		// Every Event is read; what comes after the rebuild's byte budget is counted, not held.
		if err != nil || st.Events != 8*locks || st.Locks < locks && st.Skipped.OverBudget == 0 {
			b.Fatalf("rebuilt %+v: %v", st, err)
		}
	}
}

// anyLock is a Known that takes the benchmark's Events, whose Leases were never created: it
// measures the list and the parse, not the check against the cache.
func anyLock(*corev1.ObjectReference) bool { return true }
