//go:build release

// Package thanos_test proves the mixin's multi-cluster mode on a real distributed query layer:
// two clusters (each its own API server, election, exporter, and Prometheus with
// external_labels {cluster: a|b} behind a Thanos sidecar) and Thanos Query over both.
//
// Thanos (query and sidecar) is v0.42.0, built by hack/thanos/build.sh, which `make test-release`
// runs beside the suites (docs/mixin.md, "Proven on Thanos").
package thanos_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// The rendering under test: multi-cluster mode, with LeaseNoLeader's grace cut so the
// failover's alert shows within the test.
const override = `{ showMultiCluster: true, alerts+: { LeaseNoLeader+: { 'for': '5s' } } }`

func TestFleetThroughThanosQuery(t *testing.T) {
	thanos := thanosBin(t)
	dir := t.TempDir()
	rules, dashboards := renderMixin(t, dir, override)
	a := startCluster(t, "a", "", thanos, rules)
	b := startCluster(t, "b", a.bin, thanos, rules)
	_, query := startThanos(t, thanos, "query", dir, "query", "--endpoint="+a.sidecar, "--endpoint="+b.sidecar)
	q := func(expr string) []sample { return mustQuery(t, query, expr) }

	// Both clusters' Leases through one data source, each under its own external label.
	held := `max by (cluster) (lease_held{namespace="` + leaseNS + `", lease="` + leaseName + `"})`
	eventually(t, 2*time.Minute, "both clusters' Lease held, through Thanos Query", func() (bool, string) {
		s := q(held)
		return byCluster(s)["a"] == 1 && byCluster(s)["b"] == 1, fmt.Sprint(s)
	})

	t.Run("dashboards", func(t *testing.T) { checkDashboards(t, query, dashboards) })

	// A failover in b: its leader stops (and releases), the other candidate takes over.
	changes := `max by (cluster) (lease_observed_holder_changes_total{namespace="` + leaseNS + `", lease="` + leaseName + `"})`
	before := byCluster(q(changes))
	leader := b.pool.Leader()
	if leader == nil {
		t.Fatal("cluster b has no leader to fail over")
	}
	leader.Stop()
	b.pool.Remove(leader)
	eventually(t, time.Minute, "b's failover to show through Thanos Query", func() (bool, string) {
		now := byCluster(q(changes))
		return now["b"] > before["b"], fmt.Sprintf("before %v, now %v", before, now)
	})
	if now := byCluster(q(changes)); now["a"] != before["a"] {
		t.Errorf("a failover in b changed a's holder changes: before %v, now %v", before, now)
	}

	// b loses its last candidate: leaderless in b only, on the fleet overview and in the alerts.
	b.pool.StopAll()
	leaderless := fleetQuery(t, dashboards, "Leaderless locks")
	eventually(t, time.Minute, "the fleet overview to count b leaderless", func() (bool, string) {
		s := byCluster(q(leaderless))
		return s["b"] == 1 && s["a"] == 0, fmt.Sprint(s)
	})
	firing := `ALERTS{alertname="LeaseNoLeader", alertstate="firing"}`
	eventually(t, time.Minute, "LeaseNoLeader firing in b", func() (bool, string) {
		s := q(firing)
		return len(s) == 1 && s[0].Metric["cluster"] == "b", fmt.Sprint(s)
	})
	s := q(firing)
	if m := s[0].Metric; m["namespace"] != leaseNS || m["lease"] != leaseName {
		t.Errorf("LeaseNoLeader fired for %v, want %s/%s in cluster b", m, leaseNS, leaseName)
	}
	// The rule ran in b's Prometheus, on series without the cluster label: the label came
	// from b's external_labels, as it would on the way to Alertmanager. a's has no such alert.
	if local := mustQuery(t, a.prom.URL, firing); len(local) != 0 {
		t.Errorf("cluster a's Prometheus fires %v", local)
	}
}

type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s sample) value() float64 {
	v, _ := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
	return v
}

func byCluster(ss []sample) map[string]float64 {
	m := map[string]float64{}
	for _, s := range ss {
		m[s.Metric["cluster"]] = s.value()
	}
	return m
}

// mustQuery runs an instant query against a Prometheus API (Thanos Query's included).
func mustQuery(t *testing.T, base, expr string) []sample {
	t.Helper()
	ss, err := instant(base, expr)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func instant(base, expr string) ([]sample, error) {
	raw, err := promstack.Query(base, expr)
	if err != nil {
		return nil, err
	}
	var ss []sample
	if json.Unmarshal(raw, &ss) != nil {
		return nil, nil // a scalar (`vector(0)` alone, folded by the engine): no labels to check
	}
	return ss, nil
}

// panelQuery is one line of hack/dashcheck's -list output.
type panelQuery struct{ File, Panel, RefID, Expr string }

// listQueries runs hack/dashcheck's lister (its own module, hence go run) for the
// dashboards' queries with the variables substituted, cluster set to cluster.
func listQueries(t *testing.T, dashboards, cluster string) []panelQuery {
	t.Helper()
	cmd := exec.Command("go", "run", ".", "-list", dashboards, "-cluster", cluster,
		"-namespace", leaseNS, "-lease", leaseName, "-rate-interval", "1m", "-range", "10m")
	cmd.Dir = filepath.Join(tools.RepoRoot(t), "hack", "dashcheck", "promql")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dashcheck -list: %v", err)
	}
	var qs []panelQuery
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var q panelQuery
		if err := dec.Decode(&q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	return qs
}

// fleetQuery is the fleet overview's query of the panel titled title, for every cluster.
func fleetQuery(t *testing.T, dashboards, title string) string {
	t.Helper()
	for _, q := range listQueries(t, dashboards, ".*") {
		if q.File == "fleet-overview.json" && q.Panel == title {
			return q.Expr
		}
	}
	t.Fatalf("fleet-overview.json has no panel %q", title)
	return ""
}
