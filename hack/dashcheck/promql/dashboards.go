// Package main checks the PromQL in dashboards/*.json: every query must parse
// and may only use metrics documented in docs/metrics.md. It also lists the
// queries (with template variables substituted) for an end-to-end test that
// runs them against a real Prometheus.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Only the parts of Grafana's dashboard model that carry queries; everything
// else is validated against Grafana's types by hack/dashcheck/check.mjs.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int      `json:"id"`
	Title   string   `json:"title"`
	Type    string   `json:"type"`
	Targets []target `json:"targets"`
	Panels  []panel  `json:"panels"` // a collapsed row keeps its panels here
}

type target struct {
	RefID   string `json:"refId"`
	Expr    string `json:"expr"`
	Instant bool   `json:"instant"`
	Hide    bool   `json:"hide"`
}

type variable struct {
	Name  string          `json:"name"`
	Type  string          `json:"type"`
	Query json.RawMessage `json:"query"` // a string, or {"query": "..."} in newer exports
}

// Query is one PromQL expression of a dashboard, before or after variable
// substitution. Its JSON form is the -list output, one object per line.
type Query struct {
	File    string `json:"file"`
	Panel   string `json:"panel"`
	RefID   string `json:"refId"`
	Expr    string `json:"expr"`
	Instant bool   `json:"instant"`
	// Variable is set (and Panel empty) for a template variable's query,
	// which is label_values(selector, label) rather than PromQL.
	Variable string `json:"variable,omitempty"`
}

// loadDir reads every *.json dashboard in dir, sorted by name so output and
// errors come out in a stable order.
func loadDir(dir string) (map[string]*dashboard, []string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	if len(paths) == 0 {
		return nil, nil, fmt.Errorf("no dashboard *.json in %s", dir)
	}
	sort.Strings(paths)
	out := map[string]*dashboard{}
	var names []string
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		d, err := parseDashboard(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		name := filepath.Base(p)
		out[name] = d
		names = append(names, name)
	}
	return out, names, nil
}

func parseDashboard(raw []byte) (*dashboard, error) {
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("not a dashboard: %w", err)
	}
	return &d, nil
}

// queries returns the panel targets (hidden ones too: they still run) and the
// query variables of d, unsubstituted, in dashboard order.
func (d *dashboard) queries(file string) []Query {
	var out []Query
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				out = append(out, Query{File: file, Panel: p.Title, RefID: t.RefID, Expr: t.Expr, Instant: t.Instant})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		out = append(out, Query{File: file, Variable: v.Name, Expr: v.queryString()})
	}
	return out
}

func (v variable) queryString() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var obj struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(v.Query, &obj)
	return obj.Query
}

// where names a query in messages: `leases-overview.json panel "Title" A`.
func (q Query) where() string {
	if q.Variable != "" {
		return fmt.Sprintf("%s variable %q", q.File, q.Variable)
	}
	return strings.TrimSpace(fmt.Sprintf("%s panel %q %s", q.File, q.Panel, q.RefID))
}
