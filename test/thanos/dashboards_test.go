//go:build release

package thanos_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// checkDashboards runs every query of the multi-cluster dashboards against Thanos Query
// (hack/dashcheck lists them): each runs; a per-cluster dashboard pointed at one cluster
// returns that cluster's series only, and as much data for a as for b (both are staged the
// same); the fleet overview returns one series per cluster for every query.
func checkDashboards(t *testing.T, query, dashboards string) {
	withData := map[string]map[string]int{} // cluster -> file -> queries that returned data
	for _, cluster := range []string{"a", "b"} {
		withData[cluster] = map[string]int{}
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
				withData[cluster][q.File]++
			}
		}
	}
	if !maps.Equal(withData["a"], withData["b"]) {
		t.Errorf("queries with data differ between the identically staged clusters: a %v, b %v", withData["a"], withData["b"])
	}
	// The per-lease and exporter panels must show the staged election and exporters.
	for _, f := range []string{"leases-overview.json", "lease-detail.json", "exporter-health.json"} {
		if withData["a"][f] == 0 {
			t.Errorf("%s returned no data for cluster a through Thanos Query", f)
		}
	}
	t.Logf("queries with data per cluster: %v", withData["a"])

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
