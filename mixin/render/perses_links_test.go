package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
)

// A Grafana link: a dashboard link, a panel link or a data link (which has only a title and
// a URL).
type grafanaLink struct {
	Title, Type, URL, Tooltip          string
	Tags                               []string
	IncludeVars, KeepTime, TargetBlank bool
}

type persesLink struct {
	Name, URL, Tooltip           string
	RenderVariables, TargetBlank bool
}

type grafanaLinked struct {
	UID, Title string
	Tags       []string
	Links      []grafanaLink
	Templating struct {
		List []struct{ Name, Type string }
	}
	Panels []struct {
		ID          int
		Type        string
		GridPos     struct{ X, Y int }
		Links       []grafanaLink
		FieldConfig struct {
			Defaults  struct{ Links []grafanaLink }
			Overrides []struct {
				Properties []struct {
					ID    string
					Value json.RawMessage
				}
			}
		}
	}
}

type persesLinked struct {
	Metadata struct{ Name string }
	Spec     struct {
		Variables []struct{ Spec struct{ Name string } }
		Panels    map[string]struct {
			Spec struct {
				Display struct{ Name string }
				Links   []persesLink
			}
		}
	}
}

// wantedLink is what one Grafana link must become in Perses: the URL of its Perses
// counterpart, on which panel, and the Grafana link it comes from.
type wantedLink struct {
	panel, url string
	from       grafanaLink
}

// persesDashboardURL is the URL of dashboard uid in the project the link is shown in, with
// the variables (those both dashboards have) and the time range the Grafana link passes.
func persesDashboardURL(uid string, vars []string, time bool) string {
	var params []string
	for _, v := range vars {
		params = append(params, fmt.Sprintf("var-%s=${%s:percentencode}", v, v))
	}
	if time {
		params = append(params, "start=${__from}", "end=${__to}")
	}
	u := "/projects/${__project}/dashboards/" + uid
	if len(params) > 0 {
		u += "?" + strings.Join(params, "&")
	}
	return u
}

// wantedLinks reads every link of a rendering's Grafana dashboards, by dashboard file, and
// says what each must be in Perses, from what Grafana does with it: a link to /d/<uid>
// passes the variables its URL names (${x:queryparam}, and per row var-x=${__data.fields.x},
// which Perses can pass only if the dashboard has a variable x) or, with includeVars, all of
// them, and the time range with keepTime or ${__url_time_range}; a "dashboards" link lists
// every other dashboard with its tags; any other link goes where it says. Dashboard links are
// on the Perses dashboard's first panel.
func wantedLinks(t *testing.T, r *Rendering) map[string][]wantedLink {
	t.Helper()
	gs := map[string]grafanaLinked{}
	for _, f := range r.DashboardNames() {
		var g grafanaLinked
		if err := json.Unmarshal(r.Dashboards[f], &g); err != nil {
			t.Fatal(err)
		}
		gs[g.UID] = g
	}
	vars := func(g grafanaLinked) []string {
		var out []string
		for _, v := range g.Templating.List {
			if v.Type == "query" {
				out = append(out, v.Name)
			}
		}
		return out
	}
	want := map[string][]wantedLink{}
	for _, f := range r.DashboardNames() {
		var g grafanaLinked
		if err := json.Unmarshal(r.Dashboards[f], &g); err != nil {
			t.Fatal(err)
		}
		toDashboard := func(l grafanaLink, uid string, passed []string, time bool) string {
			target, ok := gs[uid]
			if !ok {
				t.Errorf("%s: link %q goes to %s, not a rendered dashboard", f, l.Title, uid)
			}
			var pass []string
			for _, v := range vars(target) {
				if slices.Contains(vars(g), v) && (l.IncludeVars || slices.Contains(passed, v)) {
					pass = append(pass, v)
				}
			}
			return persesDashboardURL(uid, pass, time || l.KeepTime)
		}
		perses := func(l grafanaLink) string {
			path, query, _ := strings.Cut(l.URL, "?")
			rest, ok := strings.CutPrefix(path, "/d/")
			if !ok {
				return l.URL
			}
			uid, _, _ := strings.Cut(rest, "/")
			var passed []string
			time := false
			for p := range strings.SplitSeq(query, "&") {
				switch name, value, _ := strings.Cut(p, "="); {
				case p == "${__url_time_range}":
					time = true
				case strings.HasPrefix(p, "${") && strings.HasSuffix(p, ":queryparam}"):
					passed = append(passed, strings.TrimSuffix(strings.TrimPrefix(p, "${"), ":queryparam}"))
				case strings.HasPrefix(name, "var-") && (strings.HasPrefix(value, "${__data.") || strings.HasPrefix(value, "${__field.")):
					passed = append(passed, strings.TrimPrefix(name, "var-"))
				case p != "":
					t.Errorf("%s: link %q: this test does not know the URL parameter %s", f, l.Title, p)
				}
			}
			return toDashboard(l, uid, passed, time)
		}
		first, top := "", [2]int{1 << 30, 1 << 30}
		for _, p := range g.Panels {
			if pos := [2]int{p.GridPos.Y, p.GridPos.X}; p.Type != "row" && (pos[0] < top[0] || pos[0] == top[0] && pos[1] < top[1]) {
				first, top = fmt.Sprint(p.ID), pos
			}
		}
		for _, p := range g.Panels {
			links := append(slices.Clone(p.Links), p.FieldConfig.Defaults.Links...)
			for _, o := range p.FieldConfig.Overrides {
				for _, prop := range o.Properties {
					if prop.ID == "links" {
						var ls []grafanaLink
						if err := json.Unmarshal(prop.Value, &ls); err != nil {
							t.Fatal(err)
						}
						links = append(links, ls...)
					}
				}
			}
			for _, l := range links {
				want[f] = append(want[f], wantedLink{fmt.Sprint(p.ID), perses(l), l})
			}
		}
		for _, l := range g.Links {
			switch l.Type {
			case "link":
				want[f] = append(want[f], wantedLink{first, perses(l), l})
			case "dashboards":
				for _, uid := range slices.Sorted(maps.Keys(gs)) {
					d := gs[uid]
					if uid != g.UID && !slices.ContainsFunc(l.Tags, func(tag string) bool { return !slices.Contains(d.Tags, tag) }) {
						want[f] = append(want[f], wantedLink{first, toDashboard(l, uid, nil, false), grafanaLink{Title: d.Title, Tooltip: l.Tooltip}})
					}
				}
			default:
				t.Errorf("%s: this test does not know dashboard links of type %q", f, l.Type)
			}
		}
	}
	return want
}

// linkProblems compares the Perses dashboards' links with what the Grafana ones ask for:
// every Grafana link has its counterpart on the right panel, with the variables rendered, and
// named after it (or after an earlier link to the same place, which Perses shows once); no
// Perses link comes from nowhere; and every link to a dashboard names one of the rendering's,
// in the project it is shown in, with only variables that both dashboards have.
func linkProblems(t *testing.T, r *Rendering, perses map[string][]byte) []string {
	t.Helper()
	var problems []string
	names := map[string][]string{} // Perses dashboard name -> its variables
	for _, f := range r.PersesNames() {
		var p persesLinked
		if err := json.Unmarshal(perses[f], &p); err != nil {
			t.Fatal(err)
		}
		for _, v := range p.Spec.Variables {
			names[p.Metadata.Name] = append(names[p.Metadata.Name], v.Spec.Name)
		}
		names[p.Metadata.Name] = append(names[p.Metadata.Name], "") // known, with or without variables
	}
	for f, wants := range wantedLinks(t, r) {
		var p persesLinked
		if err := json.Unmarshal(perses[f], &p); err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			links := p.Spec.Panels[w.panel].Spec.Links
			i := slices.IndexFunc(links, func(l persesLink) bool { return l.URL == w.url })
			if i < 0 {
				problems = append(problems, fmt.Sprintf("%s: Grafana's link %q has no Perses link to %s on panel %s (%q); it has %+v",
					f, w.from.Title, w.url, w.panel, p.Spec.Panels[w.panel].Spec.Display.Name, links))
				continue
			}
			if l := links[i]; !l.RenderVariables || l.TargetBlank != w.from.TargetBlank {
				problems = append(problems, fmt.Sprintf("%s: Perses link %q: renderVariables %t, targetBlank %t (Grafana's %t)", f, l.Name, l.RenderVariables, l.TargetBlank, w.from.TargetBlank))
			}
		}
		for key, panel := range p.Spec.Panels {
			for _, l := range panel.Spec.Links {
				named := slices.ContainsFunc(wants, func(w wantedLink) bool { return w.panel == key && w.url == l.URL && w.from.Title == l.Name })
				if !named {
					problems = append(problems, fmt.Sprintf("%s panel %q: Perses link %q to %s comes from no Grafana link of that name", f, panel.Spec.Display.Name, l.Name, l.URL))
				}
				problems = append(problems, checkDashboardURL(f, l, names, names[p.Metadata.Name])...)
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// checkDashboardURL: a link to a Perses dashboard goes to one of the rendering's, in the
// project it is shown in, with variables that both dashboards have.
func checkDashboardURL(file string, l persesLink, dashboards map[string][]string, own []string) []string {
	rest, ok := strings.CutPrefix(l.URL, "/projects/")
	if !ok {
		if strings.HasPrefix(l.URL, "/") {
			return []string{fmt.Sprintf("%s: link %q to %s: a path on the Perses server that is no project's", file, l.Name, l.URL)}
		}
		return nil // another site (the status page)
	}
	path, query, _ := strings.Cut(rest, "?")
	project, name, _ := strings.Cut(path, "/dashboards/")
	target, ok := dashboards[name]
	switch {
	case project != "${__project}":
		return []string{fmt.Sprintf("%s: link %q to project %q, not the one it is shown in (${__project}): the operator's project is the resources' namespace", file, l.Name, project)}
	case !ok:
		return []string{fmt.Sprintf("%s: link %q to %s, not one of the rendered dashboards", file, l.Name, name)}
	}
	var problems []string
	for p := range strings.SplitSeq(query, "&") {
		k, v, _ := strings.Cut(p, "=")
		variable, isVar := strings.CutPrefix(k, "var-")
		switch {
		case isVar && (!slices.Contains(target, variable) || !slices.Contains(own, variable) || v != "${"+variable+":percentencode}"):
			problems = append(problems, fmt.Sprintf("%s: link %q passes %s: not a variable of both dashboards, percent-encoded", file, l.Name, p))
		case !isVar && p != "start=${__from}" && p != "end=${__to}":
			problems = append(problems, fmt.Sprintf("%s: link %q: parameter %s is neither a variable nor the time range", file, l.Name, p))
		}
	}
	return problems
}

// TestPersesLinksAreTheGrafanaOnes: every dashboard, panel and data link of the Grafana
// dashboards is a Perses panel link, a link to another dashboard going to its Perses twin in
// the same project, in the default and the multi-cluster rendering (with the status page).
func TestPersesLinksAreTheGrafanaOnes(t *testing.T) {
	for name, override := range persesConfigs {
		r := render(t, override)
		for _, p := range linkProblems(t, r, r.Perses) {
			t.Errorf("%s rendering: %s", name, p)
		}
		n := 0
		for _, ws := range wantedLinks(t, r) {
			n += len(ws)
		}
		// Each dashboard's list of the others (3 of 4, 4 of 5), the lease detail's link back to
		// the overview and its Holder's, the overview's drill-down; the status page.
		if least := map[string]int{"default": 4*3 + 3, "multi-cluster": 5*4 + 4}[name]; n < least {
			t.Errorf("%s rendering: %d Grafana links found, want at least %d: is the walk right?", name, n, least)
		}
		t.Logf("%s rendering: %d Grafana links, each with its Perses counterpart", name, n)
	}
}

// TestPersesLinkCheckBites: the check above fails when a link is dropped, sent to a fixed
// project, or passes a variable the target does not have.
func TestPersesLinkCheckBites(t *testing.T) {
	r := render(t, "")
	for _, c := range []struct {
		name, want string
		breakIt    func(links []any) []any
	}{
		{"dropped", "has no Perses link", func(ls []any) []any { return ls[1:] }},
		{"fixed project", "not the one it is shown in", func(ls []any) []any {
			l := ls[0].(map[string]any)
			l["url"] = strings.Replace(l["url"].(string), "${__project}", "lease-exporter", 1)
			return ls
		}},
		{"unknown variable", "not a variable of both dashboards", func(ls []any) []any {
			l := ls[0].(map[string]any)
			l["url"] = l["url"].(string) + "&var-kind=${kind:percentencode}"
			return ls
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			perses := maps.Clone(r.Perses)
			var d map[string]any
			if err := json.Unmarshal(perses["leases-overview.json"], &d); err != nil {
				t.Fatal(err)
			}
			// The table's drill-down to the lease detail.
			spec := d["spec"].(map[string]any)["panels"].(map[string]any)["6"].(map[string]any)["spec"].(map[string]any)
			spec["links"] = c.breakIt(append([]any{}, spec["links"].([]any)...))
			perses["leases-overview.json"], _ = json.Marshal(d)
			problems := linkProblems(t, r, perses)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("a %s link: the check says %q, want a problem saying %q", c.name, problems, c.want)
			}
		})
	}
}
