package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
)

// The Lease the lease-detail dashboard is pointed at: one that fails over during the test.
const detailNS, detailLease = "e2e-dash-a", "ctrl"

// panelQuery is one line of the dashcheck CLI's -list output.
type panelQuery struct {
	File    string `json:"file"`
	Panel   string `json:"panel"`
	RefID   string `json:"refId"`
	Expr    string `json:"expr"`
	Instant bool   `json:"instant"`
}

// TestDashboards runs every panel query of dashboards/*.json against Prometheus scraping the
// exporter over a live environment, and fails for each one that returns nothing: a panel
// showing "No data" on a healthy cluster is a broken panel. Panels about trouble (leaderless
// Leases, stale node heartbeats, recent failovers) get that trouble staged, not exempted.
func TestDashboards(t *testing.T) {
	env.Shared(t)
	queries := listPanelQueries(t)
	stageDashboardConditions(t)

	staged := 0
	for _, q := range queries {
		if empty, err := queryEmpty(q.Expr); err != nil || empty {
			t.Errorf("%s panel %q %s returned no data (err=%v):\n%s", q.File, q.Panel, q.RefID, err, q.Expr)
			continue
		}
		// `count(...) or vector(0)` always answers; the staged condition must show up in the
		// counted part itself, or the panel would read 0 with trouble right there.
		if cond, ok := strings.CutSuffix(strings.TrimSpace(q.Expr), "or vector(0)"); ok {
			staged++
			if empty, err := queryEmpty(cond); err != nil || empty {
				t.Errorf("%s panel %q %s shows only its `or vector(0)` fallback although the condition was staged (err=%v):\n%s",
					q.File, q.Panel, q.RefID, err, q.Expr)
			}
		}
	}
	t.Logf("ran %d panel queries; %d of them also without their `or vector(0)` fallback", len(queries), staged)
}

// stageDashboardConditions stages what every panel of the dashboards is about, and waits
// until Prometheus has scraped all of it: three elections (one of which fails over), a
// released Lease nobody took over, LeaseCandidates mid-upgrade, node heartbeats of which one
// stops (late, then expired), and a real kube-scheduler pair. TestDashboards runs every query
// against it; the release tier's TestDashboardsDrawInPerses opens every dashboard over it.
// Everything it starts stops, and every Lease it wrote is deleted, when t ends.
func stageDashboardConditions(t *testing.T) {
	t.Helper()
	nodes := []string{"e2e-node-1", "e2e-node-2", "e2e-node-3", "e2e-node-dead"}
	// Registered first so it runs last: after the kube-schedulers and heartbeats stopped and
	// the diagnostics printed. Deleting the Leases ends their series, so no alert outlives
	// the test.
	t.Cleanup(func() {
		for _, n := range nodes {
			deleteLease(t, "kube-node-lease", n)
		}
		deleteLease(t, "kube-system", "kube-scheduler")
	})

	s := newScenario(t, detailNS, detailLease, "orphan")
	s.namespace("e2e-dash-b", "worker")
	s.namespace("e2e-dash-c", "batch")
	ctrl := s.pool(detailNS, detailLease, "ctrl", 3)
	s.pool("e2e-dash-b", "worker", "worker", 2)
	s.pool("e2e-dash-c", "batch", "batch", 2)
	// "Leaders without a valid holder": a Lease whose leader released it and nobody took over.
	orphan := s.candidate(detailNS, "orphan", "orphan-0", election.Fast, true)
	// LeaseCandidates of the detail Lease in the middle of an upgrade, written through the API
	// as coordinated components write them, for the lease-detail candidate panels.
	leaseCandidates(t, detailNS, detailLease, map[string]string{"ctrl-old": "1.35.0", "ctrl-new": "1.36.0"})

	// Node heartbeats as a kubelet writes them, one of which stops: "stale" and "expired".
	s.show("kube-node-lease", nodes...)
	deadStop := make(chan struct{})
	for _, n := range nodes {
		stop := make(chan struct{})
		if n == "e2e-node-dead" {
			stop = deadStop
		}
		heartbeat(t, n, stop)
	}
	close(deadStop)

	// A real kube-scheduler pair electing through kube-system/kube-scheduler.
	s.show("kube-system", "kube-scheduler")
	for range 2 {
		p, err := env.CP.StartComponent(context.Background(), controlplane.KubeScheduler)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Stop() })
	}

	eventually(t, time.Minute, "orphan-0 to lead", func() (bool, string) { return orphan.Leading(), "not leading" })
	waitProm(t, time.Minute, sel("lease_held", detailNS, "orphan"), eq(1))
	orphan.Stop() // released: holderIdentity becomes ""
	// One failover, so transitions and holder-change panels have something to show.
	waitProm(t, time.Minute, sel("lease_held", detailNS, detailLease), eq(1))
	s.failover(ctrl, "ctrl-r1")

	// Wait until Prometheus has seen every staged condition, then a few more scrapes.
	for _, c := range []struct {
		expr string
		ok   func(float64) bool
	}{
		{sel("lease_observed_holder_changes_total", detailNS, detailLease), func(v float64) bool { return v >= 1 }},
		// Measured on live renewals only: the skew panels need one seen after the failover.
		{sel("lease_holder_clock_skew_seconds", detailNS, detailLease), func(float64) bool { return true }},
		{sel("lease_held", detailNS, "orphan"), eq(0)},
		// The dead node is named only while overdue: late past half its 10s duration, expired
		// past all of it.
		{renewAge("kube-node-lease", "e2e-node-dead"), func(v float64) bool { return v > 25 }},
		{classLocks("expired"), func(v float64) bool { return v >= 1 }},
		{classLocks("on_time"), func(v float64) bool { return v >= 3 }},
		{sel("lease_held", "kube-system", "kube-scheduler"), eq(1)},
		{sel("lease_held", "e2e-dash-b", "worker"), eq(1)},
		{sel("lease_held", "e2e-dash-c", "batch"), eq(1)},
	} {
		waitProm(t, time.Minute, c.expr, c.ok)
	}
	time.Sleep(3 * scrapeInterval)
}

// listPanelQueries runs the project's dashcheck CLI (its own module, hence go run) for the
// substituted panel queries. 1m rate windows hold ~60 samples at the 1s scrape interval.
func listPanelQueries(t *testing.T) []panelQuery {
	t.Helper()
	cmd := exec.Command("go", "run", ".", "-list", filepath.Join(env.root, "dashboards"),
		"-job", exporterJobName, "-namespace", detailNS, "-lease", detailLease,
		"-rate-interval", "1m", "-range", "1h")
	cmd.Dir = filepath.Join(env.root, "hack", "dashcheck", "promql")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dashcheck -list: %v\n%s", err, stderr.String())
	}
	var qs []panelQuery
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q panelQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("dashcheck -list line %q: %v", sc.Text(), err)
		}
		qs = append(qs, q)
	}
	if len(qs) == 0 {
		t.Fatal("dashcheck -list printed no queries")
	}
	return qs
}

// queryEmpty runs an instant query at now: a range panel's latest point, which is what a
// live dashboard's right edge shows. Scalars and strings count as data.
func queryEmpty(expr string) (bool, error) {
	raw, err := promstack.Query(env.prom.URL, expr)
	if err != nil {
		return false, err
	}
	var vec []json.RawMessage
	if json.Unmarshal(raw, &vec) != nil {
		return false, nil
	}
	return len(vec) == 0, nil
}

// heartbeat creates a node Lease in kube-node-lease and renews it every 2s until stop is
// closed or the test ends, like a kubelet (which renews every 10s of 40s; scaled down here).
func heartbeat(t *testing.T, node string, stop <-chan struct{}) {
	t.Helper()
	leases := env.Client.CoordinationV1().Leases("kube-node-lease")
	ctx, cancel := context.WithCancel(context.Background())
	holder, duration := node, int32(10)
	_, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration,
			RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}, metav1.CreateOptions{})
	if err != nil {
		cancel()
		t.Fatalf("create node lease %s: %v", node, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case <-tick.C:
			}
			// A failed renewal (conflict, slow API server) is retried on the next tick, as
			// the kubelet does; the 10s duration leaves room for several.
			if l, err := leases.Get(ctx, node, metav1.GetOptions{}); err == nil {
				l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
				_, _ = leases.Update(ctx, l, metav1.UpdateOptions{})
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// renewAge is the node dashboard's renew age of one overdue node heartbeat: scrape time minus
// observed renew time.
func renewAge(ns, lease string) string {
	obs := sel("lease_overdue_observed_renew_timestamp_seconds", ns, lease)
	return fmt.Sprintf("timestamp(%s) - %s", obs, obs)
}

// classLocks is how many node heartbeats the exporter counts in state.
func classLocks(state string) string {
	return fmt.Sprintf(`lease_class_locks{job=%q,class="node-heartbeat",state=%q}`, exporterJobName, state)
}

func deleteLease(t *testing.T, ns, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := env.Client.CoordinationV1().Leases(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete lease %s/%s: %v", ns, name, err)
	}
}

// leaseCandidates creates one LeaseCandidate per name (to its emulation version) for lease,
// deleted at the end of the test.
func leaseCandidates(t *testing.T, ns, lease string, emulation map[string]string) {
	t.Helper()
	for name, version := range emulation {
		now := metav1.NowMicro()
		_, err := env.Client.CoordinationV1beta1().LeaseCandidates(ns).Create(context.Background(), &coordinationv1beta1.LeaseCandidate{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: lease, RenewTime: &now, BinaryVersion: version,
				EmulationVersion: version, Strategy: coordinationv1.OldestEmulationVersion},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create LeaseCandidate %s/%s: %v", ns, name, err)
		}
		t.Cleanup(func() {
			if err := env.Client.CoordinationV1beta1().LeaseCandidates(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete LeaseCandidate %s/%s: %v", ns, name, err)
			}
		})
	}
}
