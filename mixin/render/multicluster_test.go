package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"
)

// multiCluster is the mode under test, with a cluster label other than the sources' own
// `cluster`, so that a query the mixin forgot to rewrite shows up as a leftover.
const multiCluster = `{ showMultiCluster: true, clusterLabel: 'k8s_cluster' }`

// query is one PromQL expression of a rendering and where it comes from.
type query struct{ where, expr string }

// printfQuery finds the template queries in alert annotations: {{ with printf `QUERY` ... }}.
var printfQuery = regexp.MustCompile("printf `([^`]*)`")

// queries lists every PromQL expression of r: alert expressions, the queries their
// descriptions run, panel targets and the selectors of label_values variables.
func queries(t *testing.T, r *Rendering) []query {
	t.Helper()
	var out []query
	var rf RuleFile
	if err := yaml.Unmarshal(r.Alerts, &rf); err != nil {
		t.Fatal(err)
	}
	for _, g := range rf.Groups {
		for _, rule := range g.Rules {
			name := rule.Alert + rule.Record
			out = append(out, query{name + " expr", rule.Expr})
			for k, a := range rule.Annotations {
				for _, m := range printfQuery.FindAllStringSubmatch(a, -1) {
					out = append(out, query{name + " " + k + " template query", strings.ReplaceAll(m[1], "%s", "x")})
				}
			}
		}
	}
	for _, name := range r.DashboardNames() {
		var d dashboard
		if err := json.Unmarshal(r.Dashboards[name], &d); err != nil {
			t.Fatal(err)
		}
		for _, p := range d.allPanels() {
			for _, tg := range p.Targets {
				out = append(out, query{fmt.Sprintf("%s panel %q %s", name, p.Title, tg.RefID), tg.Expr})
			}
		}
		for _, v := range d.Templating.List {
			// label_values(SELECTOR, label): the job and cluster lists span every cluster on purpose.
			if sel, ok := strings.CutPrefix(v.Query, "label_values("); ok && v.Name != "job" && v.Name != "cluster" {
				sel = sel[:strings.LastIndex(sel, ",")]
				out = append(out, query{fmt.Sprintf("%s variable %s", name, v.Name), sel})
			}
		}
	}
	return out
}

type panel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

type dashboard struct {
	UID        string   `json:"uid"`
	Tags       []string `json:"tags"`
	Panels     []panel  `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Query      string `json:"query"`
			Hide       int    `json:"hide"`
			IncludeAll bool   `json:"includeAll"`
		} `json:"list"`
	} `json:"templating"`
}

func (d dashboard) allPanels() []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

func parse(t *testing.T, q query) parser.Expr {
	t.Helper()
	s, err := substitute(q.expr)
	if err != nil {
		t.Errorf("%s: %v", q.where, err)
		return nil
	}
	e, err := parser.NewParser(parser.Options{}).ParseExpr(s)
	if err != nil {
		t.Errorf("%s does not parse: %v\n%s", q.where, err, s)
		return nil
	}
	return e
}

// TestMultiClusterKeepsTheClusterLabel: in multi-cluster mode no alert, description query,
// panel or variable mixes clusters, and no query still names the sources' `cluster` label.
func TestMultiClusterKeepsTheClusterLabel(t *testing.T) {
	qs := queries(t, render(t, multiCluster))
	for _, q := range qs {
		e := parse(t, q)
		if e == nil {
			continue
		}
		for _, v := range clusterViolations(e, "k8s_cluster") {
			t.Errorf("%s: %s", q.where, v)
		}
		if slices.Contains(labelNames(e), "cluster") {
			t.Errorf("%s still uses the label `cluster`, not clusterLabel:\n%s", q.where, q.expr)
		}
	}
	if len(qs) < 60 {
		t.Fatalf("found only %d queries: is the rendering walked right?", len(qs))
	}
	t.Logf("%d queries keep or filter k8s_cluster", len(qs))
}

// TestSingleClusterModeFailsTheRule proves the check bites: the default rendering, made for
// one Prometheus per cluster, aggregates across whatever clusters a query layer holds, and the
// check must say where (the absent() of LeaseExporterDown, the on (job, instance) guards, the
// overview's fleet-wide counts).
func TestSingleClusterModeFailsTheRule(t *testing.T) {
	found := map[string]bool{}
	for _, q := range queries(t, render(t, "")) {
		if e := parse(t, q); e != nil && len(clusterViolations(e, "cluster")) > 0 {
			found[strings.Fields(q.where)[0]] = true
		}
	}
	for _, want := range []string{"LeaseExporterDown", "LeaseNoLeader", "leases-overview.json", "lease-detail.json"} {
		if !found[want] {
			t.Errorf("the check finds nothing wrong with %s in single-cluster mode; it does not bite", want)
		}
	}
}

// TestMultiClusterDashboards: every dashboard has a visible cluster variable; the per-cluster
// dashboards pick exactly one cluster, and the fleet overview is added.
func TestMultiClusterDashboards(t *testing.T) {
	r := render(t, multiCluster)
	if _, ok := r.Dashboards["fleet-overview.json"]; !ok {
		t.Fatal("no fleet-overview.json in multi-cluster mode")
	}
	if _, ok := render(t, "").Dashboards["fleet-overview.json"]; ok {
		t.Error("the fleet overview is rendered in single-cluster mode, where it has one row")
	}
	for _, name := range r.DashboardNames() {
		var d dashboard
		if err := json.Unmarshal(r.Dashboards[name], &d); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(d.Templating.List, func(v struct {
			Name       string `json:"name"`
			Query      string `json:"query"`
			Hide       int    `json:"hide"`
			IncludeAll bool   `json:"includeAll"`
		}) bool {
			return v.Name == "cluster"
		})
		if i < 0 {
			t.Errorf("%s has no cluster variable", name)
			continue
		}
		v := d.Templating.List[i]
		if v.Hide != 0 || v.Query != "label_values(lease_exporter_build_info, k8s_cluster)" {
			t.Errorf("%s: cluster variable hidden or not over k8s_cluster: %+v", name, v)
		}
		if v.IncludeAll != (name == "fleet-overview.json") {
			t.Errorf("%s: cluster variable includeAll=%v; only the fleet overview spans clusters", name, v.IncludeAll)
		}
	}
}
