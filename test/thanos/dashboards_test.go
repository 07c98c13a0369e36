//go:build release

package thanos_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkDashboards runs every query of the multi-cluster dashboards against Thanos Query
// (hack/dashcheck lists them): each runs; a per-cluster dashboard pointed at one cluster
// returns that cluster's series only, and the same queries return data for a as for b (both
// are staged the same; b's Prometheus may be a scrape behind, so rate() panels are given a
// minute to catch up); the fleet overview returns one series per cluster for every query.
func checkDashboards(t *testing.T, query, dashboards string) {
	var withData map[string]map[string]bool // cluster -> "file panel refID" -> returned data
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Second) {
		withData = map[string]map[string]bool{"a": queriesWithData(t, query, dashboards, "a"), "b": queriesWithData(t, query, dashboards, "b")}
		if t.Failed() || maps.Equal(withData["a"], withData["b"]) || time.Now().After(deadline) {
			break
		}
	}
	if !maps.Equal(withData["a"], withData["b"]) {
		var onlyA, onlyB []string
		for q := range withData["a"] {
			if !withData["b"][q] {
				onlyA = append(onlyA, q)
			}
		}
		for q := range withData["b"] {
			if !withData["a"][q] {
				onlyB = append(onlyB, q)
			}
		}
		t.Errorf("queries with data differ between the identically staged clusters after a minute: only a %v, only b %v", onlyA, onlyB)
	}
	perFile := map[string]int{}
	for q := range withData["a"] {
		perFile[strings.SplitN(q, " ", 2)[0]]++
	}
	// The per-lease and exporter panels must show the staged election and exporters.
	for _, f := range []string{"leases-overview.json", "lease-detail.json", "exporter-health.json"} {
		if perFile[f] == 0 {
			t.Errorf("%s returned no data for cluster a through Thanos Query", f)
		}
	}
	t.Logf("queries with data per cluster: %v", perFile)

	fleet := 0
	for _, q := range listQueries(t, dashboards, ".*") {
		if q.File != "fleet-overview.json" {
			continue
		}
		fleet++
		ss, err := instant(query, q.Expr)
		if err != nil {
			t.Errorf("fleet panel %q %s: %v", q.Panel, q.RefID, err)
			continue
		}
		got := slices.Sorted(maps.Keys(byCluster(ss)))
		if !slices.Equal(got, []string{"a", "b"}) || len(ss) != 2 {
			t.Errorf("fleet panel %q %s shows clusters %v (%d series), want one series each for a and b:\n%s", q.Panel, q.RefID, got, len(ss), q.Expr)
		}
	}
	if fleet == 0 {
		t.Error("no fleet-overview.json queries listed")
	}
	t.Log(fmt.Sprintf("%d fleet queries return one series per cluster", fleet))
}

// queriesWithData runs the per-cluster dashboards' queries pointed at cluster and returns
// those that returned data, as "file panel refID"; a series of another cluster fails t.
func queriesWithData(t *testing.T, query, dashboards, cluster string) map[string]bool {
	out := map[string]bool{}
	for _, q := range listQueries(t, dashboards, cluster) {
		if q.File == "fleet-overview.json" {
			continue
		}
		ss, err := instant(query, q.Expr)
		if err != nil {
			t.Errorf("%s panel %q %s: %v", q.File, q.Panel, q.RefID, err)
			continue
		}
		for _, s := range ss {
			if c, ok := s.Metric["cluster"]; ok && c != cluster {
				t.Errorf("%s panel %q %s, pointed at cluster %s, shows cluster %s:\n%s", q.File, q.Panel, q.RefID, cluster, c, q.Expr)
			}
		}
		if len(ss) > 0 {
			out[fmt.Sprintf("%s %q %s", q.File, q.Panel, q.RefID)] = true
		}
	}
	return out
}
