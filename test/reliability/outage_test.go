package reliability_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// Long is a leader-election timing whose lease outlives a short API server restart (stop,
// start-up on a busy machine), so the lease is truly held throughout and lease_held must read
// 1 in every scrape, before, during and after the outage.
var Long = election.Timings{LeaseDuration: 60 * time.Second, RenewDeadline: 40 * time.Second, RetryPeriod: 2 * time.Second}

// TestAPIServerRestartedThreeTimes stops kube-apiserver, keeps it down for a few seconds and
// starts it again, three times in a row, under a running exporter.
func TestAPIServerRestartedThreeTimes(t *testing.T) {
	ns := newNamespace(t, "restarts")
	startPool(t, ns, "renewing", 2, Long)
	exp := env.StartReady(t, env.Bin, "--namespaces="+ns, "--log.format=json")
	waitCurrent(t, exp, ns, "renewing", time.Time{})
	rec := record(t, exp, 500*time.Millisecond)
	present := []string{"renewing"}
	for i := 1; i <= 3; i++ {
		env.StopAPIServer(t)
		down := time.Now()
		// Scrapes keep working and say the view is stale.
		eventually(t, 30*time.Second, "watch_up 0 while the API server is down", func() (bool, string) {
			s := scrape(t, exp)
			return gauge(s, "lease_exporter_watch_up") == 0, health(s)
		})
		time.Sleep(3 * time.Second)
		env.StartAPIServer(t)
		waitWatchUp(t, exp)
		waitCurrent(t, exp, ns, "renewing", down)
		// The watch is live again, not just open: a Lease created now shows up.
		name := fmt.Sprintf("created-after-restart-%d", i)
		createLease(t, ns, name, "pod-x", 3600)
		present = append(present, name)
		waitFor(t, exp, "the Lease created after restart "+name, func(s *exporterproc.Scrape) bool {
			return checkExactlyOnce(s, ns, present...) == nil
		})
		t.Logf("restart %d: back to current %.1fs after the API server went down", i, time.Since(down).Seconds())
	}
	samples := rec.Stop()
	checkSamples(t, samples, ns, []string{"renewing"}, []string{"renewing"})
	if len(watchDown(samples)) == 0 {
		t.Error("no scrape saw lease_exporter_watch_up 0")
	}
	checkRunLogs(t, exp, 3)
}

// TestAPIServerOutage keeps kube-apiserver down for 60 s. While it is down a Lease is deleted
// directly in etcd, so the change is certain to have happened while no watch could see it.
func TestAPIServerOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("60 s outage")
	}
	ns := newNamespace(t, "outage")
	// The pool renews every 2 s, so its lease is held at the moment the watch breaks; its
	// 30 s duration runs out during the outage, so after it a candidate must take it anew.
	startPool(t, ns, "renewing", 2, Slow)
	exp := env.StartReady(t, env.Bin, "--namespaces="+ns, "--log.format=json")
	waitCurrent(t, exp, ns, "renewing", time.Time{})
	// orphan's holder is gone: held before the outage, truly expired by its end. The exporter
	// must keep 1 while it cannot know (frozen), and show 0 once it can see again.
	createLease(t, ns, "orphan", "gone-pod", 40)
	createLease(t, ns, "deleted-in-outage", "pod-d", 3600)
	waitFor(t, exp, "orphan held before the outage", func(s *exporterproc.Scrape) bool {
		return leaseValue(s, "lease_held", ns, "orphan") == 1 && leaseValue(s, "lease_held", ns, "deleted-in-outage") == 1
	})
	all := []string{"renewing", "orphan", "deleted-in-outage"}

	rec := record(t, exp, time.Second)
	env.StopAPIServer(t)
	down := time.Now()
	if err := etcdDelete(ns, "deleted-in-outage"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60*time.Second - time.Since(down))
	outage := rec.Since(time.Time{})
	env.StartAPIServer(t)

	// During the outage: every scrape succeeded, nothing flipped to "no holder", nothing lost
	// or duplicated, and the staleness gauges told the truth.
	checkSamples(t, outage, ns, []string{"renewing", "orphan", "deleted-in-outage"}, all)
	brokenWatch := watchDown(outage)
	checkStaleGrows(t, brokenWatch, ns, "renewing")
	if last := brokenWatch[len(brokenWatch)-1]; gauge(last.s, "lease_exporter_watch_stale_seconds") < 50 {
		t.Errorf("watch_stale_seconds only %.1f at the end of a 60 s outage", gauge(last.s, "lease_exporter_watch_stale_seconds"))
	}

	// After it: current again without a restart, the deletion seen, held equals reality.
	waitWatchUp(t, exp)
	waitCurrent(t, exp, ns, "renewing", down)
	waitFor(t, exp, "the view to match the API server after the outage", func(s *exporterproc.Scrape) bool {
		return checkExactlyOnce(s, ns, "renewing", "orphan") == nil && leaseValue(s, "lease_held", ns, "orphan") == 0
	})
	checkSamples(t, rec.Stop(), ns, nil, []string{"renewing", "orphan"})
	checkRunLogs(t, exp, 1)
	t.Logf("outage: %d scrapes, %d with watch_up 0, recovered %.1fs after the API server went down",
		len(outage), len(brokenWatch), time.Since(down).Seconds())
}

// TestEtcdRestart restarts etcd under a running kube-apiserver.
func TestEtcdRestart(t *testing.T) {
	ns := newNamespace(t, "etcd-restart")
	startPool(t, ns, "renewing", 2, Long)
	createLease(t, ns, "static", "pod-s", 3600)
	exp := env.StartReady(t, env.Bin, "--namespaces="+ns, "--log.format=json")
	waitCurrent(t, exp, ns, "renewing", time.Time{})
	rec := record(t, exp, 500*time.Millisecond)
	start := time.Now()
	if err := env.CP.RestartEtcd(); err != nil {
		t.Fatalf("restart etcd: %v", err)
	}
	t.Logf("etcd restarted in %.1fs", time.Since(start).Seconds())
	waitCurrent(t, exp, ns, "renewing", start)
	// Changes made after the restart reach the exporter: the watch is live.
	if err := env.Client.CoordinationV1().Leases(ns).Delete(context.Background(), "static", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createLease(t, ns, "created-after-restart", "pod-n", 3600)
	waitFor(t, exp, "changes made after the etcd restart", func(s *exporterproc.Scrape) bool {
		return checkExactlyOnce(s, ns, "renewing", "created-after-restart") == nil
	})
	samples := rec.Stop()
	checkSamples(t, samples, ns, []string{"renewing"}, []string{"renewing"})
	// Whether the API server closes its watches when etcd goes away is its business; the
	// exporter must report whichever happened. Recorded for docs/reliability.md.
	down := watchDown(samples)
	t.Logf("etcd restart: %d scrapes, %d with watch_up 0", len(samples), len(down))
	if len(down) > 1 {
		checkStaleGrows(t, down, ns, "renewing")
	}
	checkRunLogs(t, exp, -1)
}

// waitCurrent waits until the exporter's view is current (watch up, not stale) and shows lease
// held with a renewal after since: the candidates reach the API server again and the exporter
// sees their renewals.
func waitCurrent(t *testing.T, exp *exporterproc.Exporter, namespace, lease string, since time.Time) {
	t.Helper()
	eventually(t, 2*time.Minute, "exporter current and "+lease+" renewed", func() (bool, string) {
		s, err := exp.Scrape()
		if err != nil {
			return false, err.Error()
		}
		renew := leaseValue(s, "lease_observed_renew_timestamp_seconds", namespace, lease)
		ok := gauge(s, "lease_exporter_watch_up") == 1 && gauge(s, "lease_exporter_watch_stale_seconds") == 0 &&
			leaseValue(s, "lease_held", namespace, lease) == 1 && renew > float64(since.UnixMilli())/1e3
		return ok, fmt.Sprintf("%s held=%v renew=%.3f since=%.3f", health(s),
			leaseValue(s, "lease_held", namespace, lease), renew, float64(since.UnixMilli())/1e3)
	})
}

// waitWatchUp waits until the exporter's watch is open and caught up again, and logs how long
// that took: client-go's reflector backs off between retries (0.8 s doubling to 30 s, with up
// to 100 % jitter, reset after 2 min without failures), so after a long or repeated outage the
// exporter may take up to a minute to notice the API server is back.
func waitWatchUp(t *testing.T, exp *exporterproc.Exporter) {
	t.Helper()
	start := time.Now()
	eventually(t, 2*time.Minute, "watch up and not stale", func() (bool, string) {
		s, err := exp.Scrape()
		if err != nil {
			return false, err.Error()
		}
		return gauge(s, "lease_exporter_watch_up") == 1 && gauge(s, "lease_exporter_watch_stale_seconds") == 0, health(s)
	})
	t.Logf("watch current again %.1fs after kube-apiserver was ready", time.Since(start).Seconds())
}

// waitFor waits until cond holds for a scrape.
func waitFor(t *testing.T, exp *exporterproc.Exporter, what string, cond func(*exporterproc.Scrape) bool) {
	t.Helper()
	eventually(t, time.Minute, what, func() (bool, string) {
		s, err := exp.Scrape()
		if err != nil {
			return false, err.Error()
		}
		return cond(s), health(s)
	})
}

// checkRunLogs checks that the exporter is still the same process and that it logged each run
// of failures once and its recovery once: outages of the API server produce exactly outages
// error lines (any number if outages < 0) and as many recoveries.
func checkRunLogs(t *testing.T, exp *exporterproc.Exporter, outages int) {
	t.Helper()
	select {
	case <-exp.Done():
		t.Fatalf("lease-exporter exited (code %d) during the fault", exp.ExitCode())
	default:
	}
	logs := exp.Logs()
	failed := logLines(logs, "ERROR", "")
	recovered := logLines(logs, "INFO", "list and watch of Leases recovered")
	t.Logf("exporter logged %d error lines and %d recoveries", len(failed), len(recovered))
	if outages >= 0 && (len(failed) != outages || len(recovered) != outages) {
		t.Errorf("want %d error lines and %d recovery lines, got %d and %d:\n%s", outages, outages,
			len(failed), len(recovered), testsuite.Tail(logs, 40))
	}
	if len(failed) != len(recovered) {
		t.Errorf("%d failure runs logged but %d recoveries", len(failed), len(recovered))
	}
}
