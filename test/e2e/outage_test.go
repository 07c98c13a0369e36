package e2e

import (
	"fmt"
	"maps"
	"testing"
	"time"
)

// TestAlertsAPIServerOutage stops kube-apiserver while candidates hold Leases. The exporter
// loses its watch: LeaseExporterWatchStale must page, and LeaseNoLeader must stay silent for
// the whole outage although every Lease expires in reality meanwhile (no candidate can renew)
// - a broken watch says nothing about the Leases, and paging every leader-election Lease as
// leaderless during an API outage would bury the one alert that matters. A node heartbeat
// that no kubelet can renew either must not turn overdue on the dashboards meanwhile: the
// class summary and the overdue series are judged at the same frozen moment. Starting the
// API server again must resolve WatchStale.
func TestAlertsAPIServerOutage(t *testing.T) {
	// It takes the API server away from every other test: it runs once they have finished.
	env.Exclusive(t)
	const ns = "e2e-outage"
	s := newScenario(t, ns, "alpha", "beta")
	s.pool(ns, "alpha", "alpha", 2)
	s.pool(ns, "beta", "beta", 1)
	for _, l := range []string{"alpha", "beta"} {
		waitProm(t, time.Minute, sel("lease_held", ns, l), eq(1))
	}
	// Registered before the API server's restart below, so it is deleted after it.
	const node = "e2e-outage-node"
	t.Cleanup(func() { deleteLease(t, "kube-node-lease", node) })
	heartbeat(t, node, nil)
	notOnTime := fmt.Sprintf(`lease_class_locks{job=%q,class="node-heartbeat",state!="on_time"} > 0`, exporterJobName)
	overdue := sel("lease_overdue_observed_renew_timestamp_seconds", "kube-node-lease", node)
	waitProm(t, time.Minute, fmt.Sprintf(`lease_class_locks{job=%q,class="node-heartbeat",state="on_time"}`, exporterJobName), func(v float64) bool { return v >= 1 })

	// Earlier tests' Leases are deleted, but their LeaseNoLeader may still be resolving; it
	// must be gone before the outage so that any LeaseNoLeader seen later is the outage's.
	noLeader := `ALERTS{alertname="LeaseNoLeader"}`
	eventually(t, time.Minute, "no LeaseNoLeader pending or firing before the outage", func() (bool, string) {
		ss, err := promQuery(noLeader)
		return err == nil && len(ss) == 0, fmt.Sprintf("err=%v\n%s", err, formatSamples(ss))
	})
	time.Sleep(3 * time.Second) // Alertmanager flushes groups every second
	mark := env.receiver.mark()

	running := true
	// Registered after newScenario's cleanups, so it runs before them: the Leases can only be
	// deleted, and the diagnostics read, with the API server back.
	t.Cleanup(func() {
		if !running {
			if err := env.CP.StartAPIServer(); err != nil {
				t.Errorf("restart kube-apiserver: %v", err)
			}
		}
	})
	// Timed from the SIGTERM: kube-apiserver closes watches at once, and may take seconds
	// more to exit.
	running = false
	stopped := time.Now()
	env.StopAPIServer(t)

	staleWant := map[string]string{"alertname": "LeaseExporterWatchStale", "job": exporterJobName,
		"instance": env.exporter.Addr(), "severity": "warning"}
	// Long enough for LeaseNoLeader to have fired had the guard or the freeze failed (the
	// Leases expire ~4s in; with the stale threshold in case the guard only broke once the
	// view counted as stale), and for WatchStale to page.
	minOutage := noLeaderFor + staleThreshold + 15*time.Second
	var (
		stale       webhookAlert
		staleAt     time.Time
		sawWatchOff bool
	)
	for time.Since(stopped) < minOutage || staleAt.IsZero() {
		into := time.Since(stopped).Round(time.Second)
		if into > minOutage+time.Minute {
			t.Fatalf("no LeaseExporterWatchStale at the receiver %s into the outage", into)
		}
		if ss, err := promQuery(noLeader); err != nil || len(ss) > 0 {
			t.Fatalf("%s into the API server outage LeaseNoLeader is pending or firing (err=%v):\n%s", into, err, formatSamples(ss))
		}
		if a, _, ok := env.receiver.find(mark, match{"firing", map[string]string{"alertname": "LeaseNoLeader"}}); ok {
			t.Fatalf("%s into the API server outage the receiver got LeaseNoLeader %v", into, a.Labels)
		}
		for _, q := range []string{notOnTime, overdue} {
			if ss, err := promQuery(q); err != nil || len(ss) > 0 {
				t.Fatalf("%s into the API server outage a node heartbeat reads overdue (err=%v): %s\n%s", into, err, q, formatSamples(ss))
			}
		}
		if ss, err := promQuery(`lease_exporter_watch_up == 0`); err == nil && len(ss) == 1 {
			sawWatchOff = true
		}
		if staleAt.IsZero() {
			stale, staleAt, _ = env.receiver.find(mark, match{"firing", staleWant})
		}
		time.Sleep(time.Second)
	}
	t.Logf("WatchStale paged %s into the outage; API server down for %s", staleAt.Sub(stopped).Round(time.Second), time.Since(stopped).Round(time.Second))
	if !sawWatchOff {
		t.Errorf("lease_exporter_watch_up never read 0 during the outage")
	}
	if !maps.Equal(stale.Labels, staleWant) {
		t.Errorf("WatchStale labels = %v, want exactly %v", stale.Labels, staleWant)
	}
	if d := staleAt.Sub(stopped); d < staleThreshold+watchStaleFor {
		t.Errorf("WatchStale paged %s into the outage, before %s stale + %s for", d.Round(time.Second), staleThreshold, watchStaleFor)
	}
	checkAnnotations(t, stale, "LeaseExporterWatchStale",
		fmt.Sprintf("lease-exporter %s has a stale view of the Leases.", env.exporter.Addr()),
		"has had no open watch on the API server")
	// The documented freeze: while the watch is down, held is evaluated when it broke.
	for _, l := range []string{"alpha", "beta"} {
		if ss, err := promQuery(sel("lease_held", ns, l)); err != nil || len(ss) != 1 || ss[0].value() != 1 {
			t.Errorf("lease_held for %s/%s during the outage = %s (err=%v), want frozen at 1", ns, l, formatSamples(ss), err)
		}
	}

	env.StartAPIServer(t)
	running = true
	restarted := time.Now()
	env.receiver.wait(t, mark, match{"resolved", staleWant}, 2*time.Minute)
	t.Logf("WatchStale resolved %s after the restart", time.Since(restarted).Round(time.Second))
	waitProm(t, time.Minute, `lease_exporter_watch_up`, eq(1))
}
