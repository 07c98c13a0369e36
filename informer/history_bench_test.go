package informer

import (
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lease-exporter/lease-exporter/lock"
)

// electionLease is a leader-election Lease as hack/bench creates them: a controller's
// identity (hostname_uuid, as client-go's callers build it), 15 s, acquire time, transitions.
func electionLease(i int, holder string, rv int, renew, acquired time.Time) *coordinationv1.Lease {
	r, a := metav1.NewMicroTime(renew), metav1.NewMicroTime(acquired)
	d, tr := int32(15), int32(rv)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: fmt.Sprintf("bench-election-%d", i%7), Name: fmt.Sprintf("controller-%05d", i),
			UID: types.UID(fmt.Sprintf("7d1c6f0e-2b1a-4c3d-8e9f-%012d", i)), ResourceVersion: fmt.Sprint(3000000 + rv*200000 + i),
			CreationTimestamp: metav1.NewTime(acquired.Add(-time.Hour)),
		},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, RenewTime: &r, AcquireTime: &a, LeaseTransitions: &tr},
	}
}

// identity is a distinct client-go style identity per lock and tenure: the worst case for
// the history, whose past holders' strings cannot be shared.
func identity(i, tenure int) string {
	return fmt.Sprintf("controller-%05d-7c9d8b6f5-x%03d_%08x-1b2c-4d3e-9f8a-%012d", i, tenure, i*31+tenure, i)
}

// TestLiveHeapPerLeaseWithHistory reports the live heap per cached Lease at 100k Leases in
// hack/bench's mix (90% node heartbeats, 10% leader-election locks), without history, with
// the default history just after sync, and with every leader-election lock's rings full of
// distinct holders (the worst case); and at 100k leader-election locks without history and
// just after sync. The default must keep even the worst case within the 300 B per Lease
// budget, and cost next to nothing (10 B per Lease) just after sync, when no lock has been
// seen to change; docs/benchmarks.md records the numbers.
func TestLiveHeapPerLeaseWithHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 100k Leases")
	}
	const n = 100000
	cases := []struct {
		name          string
		opts          lock.HistoryOptions
		electionEvery int
		full          bool
	}{
		{"no history", lock.HistoryOptions{}, 10, false},
		{"default history, at sync", lock.DefaultHistory, 10, false},
		{"default history, rings full", lock.DefaultHistory, 10, true},
		{"all elections, no history", lock.HistoryOptions{}, 1, false},
		{"all elections, default, at sync", lock.DefaultHistory, 1, false},
	}
	var none float64
	for _, tc := range cases {
		perLease := heapPerLeaseWithHistory(n, tc.opts, tc.electionEvery, tc.full)
		t.Logf("%-32s live heap per Lease: %.0f B", tc.name, perLease)
		switch {
		case tc.electionEvery == 10 && perLease > 300:
			t.Errorf("%s: live heap per Lease %.0f B exceeds the 300 B budget", tc.name, perLease)
		case tc.opts.Tenures == 0:
			none = perLease
		case !tc.full && perLease > none+10:
			t.Errorf("%s: live heap per Lease %.0f B, %.0f B over no history at sync, want at most 10 B", tc.name, perLease, perLease-none)
		}
	}
}

// heapPerLeaseWithHistory caches n Leases, every electionEvery-th a leader-election lock and
// the rest node heartbeats, as an initial list does; full then has every leader-election
// lock change holder and renew, seen live, until its rings are full.
func heapPerLeaseWithHistory(n int, opts lock.HistoryOptions, electionEvery int, full bool) float64 {
	before := liveHeap()
	m := newMetrics(prometheus.NewRegistry())
	now := time.Now()
	clock := now
	h := newHealth(slog.New(slog.DiscardHandler), m, time.Now)
	s := newScopes(leaseSource{}, lock.Observation(opts).Records(), Clients{}, []string{""}, Options{}, func() time.Time { return clock }, m, h)[0].store
	for i := range n {
		if i%electionEvery == 0 {
			_ = s.Add(electionLease(i, identity(i, 0), 0, now, now))
		} else {
			_ = s.Add(nodeLease(i, now))
		}
	}
	if full {
		s.liveFrom.Store(now.UnixMicro())
		for step := 1; step <= opts.Tenures+opts.Renewals+1; step++ {
			clock = now.Add(time.Duration(step) * 2 * time.Second)
			tenure := min(step, opts.Tenures)
			for i := 0; i < n; i += electionEvery {
				_ = s.Update(electionLease(i, identity(i, tenure), step, clock, clock))
			}
		}
	}
	perLease := float64(liveHeap()-before) / float64(n)
	runtime.KeepAlive(s)
	return perLease
}

// BenchmarkStoreUpdateHistory is one renewal of a cached leader-election lock seen live, with
// and without the default history: what keeping it costs per event.
func BenchmarkStoreUpdateHistory(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts lock.HistoryOptions
	}{{"none", lock.HistoryOptions{}}, {"default", lock.DefaultHistory}} {
		b.Run(tc.name, func(b *testing.B) {
			const n = 1000
			m := newMetrics(prometheus.NewRegistry())
			h := newHealth(slog.New(slog.DiscardHandler), m, time.Now)
			s := newScopes(leaseSource{}, lock.Observation(tc.opts).Records(), Clients{}, []string{""}, Options{}, time.Now, m, h)[0].store
			start := time.Now()
			leases := make([]*coordinationv1.Lease, n)
			for i := range n {
				leases[i] = electionLease(i, identity(i, 0), 0, start, start)
				_ = s.Add(leases[i])
			}
			s.liveFrom.Store(start.UnixMicro())
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				l := leases[i%n]
				l.ResourceVersion = fmt.Sprint(9000000 + i)
				r := metav1.NewMicroTime(start.Add(time.Duration(i) * time.Millisecond))
				l.Spec.RenewTime = &r
				_ = s.Update(l)
			}
		})
	}
}
