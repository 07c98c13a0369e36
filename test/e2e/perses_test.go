//go:build release

package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	testbrowser "github.com/lease-exporter/lease-exporter/internal/testenv/browser"
	"github.com/lease-exporter/lease-exporter/internal/testenv/mixin"
	"github.com/lease-exporter/lease-exporter/internal/testenv/perses"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
)

// The release tier's render: TestDashboardsDrawInPerses opens every shipped dashboard in a
// real Perses (v0.52.0, hack/perses/build.sh) in headless Chromium, over the same staged
// elections TestDashboards queries, and fails for every panel that does not draw data. It
// follows the dashboards' links as the UI renders them, draws the multi-cluster rendering
// too, and migrates each Grafana dashboard with `percli migrate` and renders that, so the
// Grafana panels are seen drawing, not only queried.

const (
	// The time range the dashboards are opened over: the staged data is minutes old.
	persesRange = "15m"
	// Tall enough that every panel is in view: Perses draws a panel only once it is visible.
	browserWidth, browserHeight = 1600, 2600
	projectShipped              = "lease-exporter"
	projectMigrated             = "grafana-migrated"
	// The multi-cluster rendering, as mixin/render's multi-cluster test renders it, in a
	// project whose datasource is a Prometheus that labels the exporter's series with that
	// cluster label, as a global query layer would.
	projectMultiCluster       = "lease-exporter-multicluster"
	multiClusterOverride      = `{ showMultiCluster: true, clusterLabel: 'k8s_cluster' }`
	clusterLabel, clusterName = "k8s_cluster", "e2e"
)

// panelState is what the page shows of one panel, read from its DOM.
type panelState struct {
	Title   string `json:"title"`
	Text    string `json:"text"`    // the panel's text without its title
	Canvas  int    `json:"canvas"`  // charts draw on a canvas (ECharts)
	Loading int    `json:"loading"` // skeletons and progress bars while queries run
	Errors  int    `json:"errors"`  // error alerts or icons
	// The panel's size on the page, in CSS pixels: a panel squeezed to nothing draws nothing
	// a person can see, whatever its DOM holds.
	Width  int `json:"width"`
	Height int `json:"height"`
}

func (p panelState) noData() bool { return strings.Contains(p.Text, "No data") }

// drew: a visible panel, neither loading nor failed, that shows series: a stat's values, or
// a chart's legend entries (a chart with no series still draws its empty axes on a canvas,
// without a word, so the canvas alone proves nothing; requireDrawn wants one besides). NaN,
// the quantile of no observations, is no data either.
func (p panelState) drew() bool {
	return !p.noData() && p.Errors == 0 && p.Loading == 0 && p.visible() && !strings.Contains(p.Text, "NaN") &&
		strings.TrimSpace(p.Text) != ""
}

// visible: at least a 100×60 px panel (the smallest shipped one, 4 of 24 columns by 4 rows,
// is about 250×120 at the browser's width).
func (p panelState) visible() bool { return p.Width >= 100 && p.Height >= 60 }

// settled: no longer loading, and showing something, drawn or not (No data, NaN, an error).
func (p panelState) settled() bool {
	return p.Loading == 0 && (p.Canvas > 0 || p.Errors > 0 || strings.TrimSpace(p.Text) != "")
}

// inspectPanels reads every panel of the page. Perses marks a panel section with
// data-testid="panel" and titles it with an h6; charts count only if drawn at a visible size.
const inspectPanels = `JSON.stringify(Array.from(document.querySelectorAll('section[data-testid="panel"]')).map(p => {
  const h = p.querySelector('h6');
  const title = h ? h.innerText.trim() : '';
  let text = p.innerText || '';
  if (title && text.startsWith(title)) text = text.slice(title.length);
  return {
    title: title,
    text: text.trim().slice(0, 400),
    canvas: Array.from(p.querySelectorAll('canvas')).filter(c => c.getBoundingClientRect().width >= 50 && c.getBoundingClientRect().height >= 30).length,
    width: Math.round(p.getBoundingClientRect().width),
    height: Math.round(p.getBoundingClientRect().height),
    loading: p.querySelectorAll('.MuiSkeleton-root, [role="progressbar"]').length,
    errors: p.querySelectorAll('[role="alert"], [data-testid="ErrorOutlineIcon"], [data-testid="AlertCircleIcon"], [data-testid="AlertCircleOutlineIcon"]').length,
  };
}))`

// TestDashboardsDrawInPerses: every panel of every Perses dashboard, and of every Grafana
// dashboard migrated by percli, draws data in a browser: none shows "No data" or an error.
func TestDashboardsDrawInPerses(t *testing.T) {
	// Alone: it stages the same elections, node heartbeats and kube-schedulers, by the same
	// names, as TestDashboards, whose cleanup would delete them under it.
	env.Exclusive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tools, err := perses.Build(ctx, env.root)
	if err != nil {
		t.Fatal(err)
	}
	// The multi-cluster project's Prometheus scrapes the same exporter, from before the
	// conditions are staged so that it holds them too.
	cluster, err := promstack.StartPrometheus(ctx, t.TempDir(), promstack.PrometheusOptions{
		Targets: []string{env.exporter.Addr()}, ScrapeInterval: scrapeInterval, EvaluationPeriod: scrapeInterval,
		TargetLabels: map[string]string{clusterLabel: clusterName},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	stageDashboardConditions(t)
	dir := t.TempDir()
	srv, err := perses.Start(ctx, dir, tools, env.prom.URL, scrapeInterval)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	for _, p := range []string{projectShipped, projectMigrated, projectMultiCluster} {
		if err := srv.CreateProject(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.CreateProjectDatasource(projectMultiCluster, cluster.URL, scrapeInterval); err != nil {
		t.Fatal(err)
	}

	shots := screenshotDir(t)
	b := newBrowser(t)
	t.Run("the check sees No data and errors", func(t *testing.T) { checkSeesFailures(t, srv, b) })
	// The lease-detail dashboard shows the Lease that failed over.
	vars := map[string]map[string]string{"lease-exporter-lease-detail": {"namespace": detailNS, "lease": detailLease}}

	shipped, _ := filepath.Glob(filepath.Join(env.root, "dashboards", "perses", "*.json"))
	grafana, _ := filepath.Glob(filepath.Join(env.root, "dashboards", "*.json"))
	if len(shipped) == 0 || len(shipped) != len(grafana) {
		t.Fatalf("%d Perses dashboards for %d Grafana ones (run make generate)", len(shipped), len(grafana))
	}
	// Every dashboard is in place before any is opened: the links lead from one to another.
	created := map[string][]byte{}
	for _, f := range shipped {
		d, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.CreateDashboard(projectShipped, d); err != nil {
			t.Fatalf("Perses refused %s: %v", f, err)
		}
		created[f] = d
	}
	for _, f := range shipped {
		d := created[f]
		name := dashboardName(t, d)
		t.Run("perses/"+name, func(t *testing.T) {
			kinds, n := panelKinds(t, d)
			panels := render(t, b, srv.DashboardURL(projectShipped, name, persesRange, vars[name]), n)
			requireDrawn(t, panels, nil, titlesOnly(kinds, "TimeSeriesChart"))
			b.screenshot(t, filepath.Join(shots, "perses-"+strings.TrimPrefix(name, "lease-exporter-")+".png"))
			if name == "lease-exporter-lease-detail" {
				start := time.Now()
				followDashboardLinks(t, b)
				t.Logf("the dashboard links followed in %s", time.Since(start).Round(time.Second))
			}
		})
	}

	// The multi-cluster rendering, one cluster chosen, and the overview's drill-down to a
	// lock's detail carrying that cluster.
	start := time.Now()
	multi, err := mixin.Render(ctx, multiClusterOverride, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	multiFiles, _ := filepath.Glob(filepath.Join(multi.Perses, "*.json"))
	if len(multiFiles) != len(shipped)+1 {
		t.Fatalf("%d Perses dashboards in multi-cluster mode, want the %d shipped ones and the fleet overview", len(multiFiles), len(shipped))
	}
	for _, f := range multiFiles {
		d, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.CreateDashboard(projectMultiCluster, d); err != nil {
			t.Fatalf("Perses refused the multi-cluster %s: %v", f, err)
		}
		created[f] = d
	}
	for _, f := range multiFiles {
		d := created[f]
		name := dashboardName(t, d)
		t.Run("multi-cluster/"+name, func(t *testing.T) {
			v := map[string]string{"cluster": clusterName}
			maps.Copy(v, vars[name])
			kinds, n := panelKinds(t, d)
			panels := render(t, b, srv.DashboardURL(projectMultiCluster, name, persesRange, v), n)
			requireDrawn(t, panels, nil, titlesOnly(kinds, "TimeSeriesChart"))
		})
	}
	t.Run("multi-cluster/drill-down", func(t *testing.T) {
		u := srv.DashboardURL(projectMultiCluster, "lease-exporter-overview", persesRange, map[string]string{"cluster": clusterName})
		if err := chromedp.Do(b.ctx, chromedp.Navigate(u)); err != nil {
			t.Fatalf("open %s: %v", u, err)
		}
		followDrillDown(t, b)
	})
	t.Logf("the multi-cluster rendering drawn and its drill-down followed in %s", time.Since(start).Round(time.Second))
	for _, f := range grafana {
		migrated, err := srv.Migrate(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		migrated = withoutDatasourceVariable(t, migrated)
		name := dashboardName(t, migrated)
		if err := srv.CreateDashboard(projectMigrated, migrated); err != nil {
			t.Fatalf("Perses refused the migrated %s: %v", f, err)
		}
		t.Run("grafana-migrated/"+name, func(t *testing.T) {
			// What percli migrate cannot carry over it replaces by a Markdown panel saying
			// so: exactly the Grafana panels Perses 0.52 has no migration for (tables, bar
			// gauges, state timelines; docs/dashboards.md). Those are left out of the check.
			kinds, n := panelKinds(t, migrated)
			placeholders, unsupported := titlesOnly(kinds, "Markdown"), grafanaPanelsOfTypes(t, f, "table", "bargauge", "state-timeline")
			if !slices.Equal(placeholders, unsupported) {
				t.Errorf("percli migrate replaced %q by Markdown placeholders; expected exactly the Grafana panels it has no migration for: %q", placeholders, unsupported)
			}
			t.Logf("not carried over by percli migrate: %q", placeholders)
			panels := render(t, b, srv.DashboardURL(projectMigrated, name, persesRange, vars[name]), n)
			requireDrawn(t, panels, placeholders, titlesOnly(kinds, "TimeSeriesChart"))
			b.screenshot(t, filepath.Join(shots, "perses-migrated-"+strings.TrimPrefix(name, "lease-exporter-")+".png"))
		})
	}
}

// checkSeesFailures proves the check can fail: on a dashboard of a stat and a chart whose
// query returns nothing (the stat says No data; the chart draws empty axes and no legend), a
// stat and a chart whose query Prometheus rejects, and a stat and a chart that have data,
// only the last two count as drawn.
func checkSeesFailures(t *testing.T, srv *perses.Server, b *browser) {
	panel := func(title, kind, query string) map[string]any {
		return map[string]any{"kind": "Panel", "spec": map[string]any{
			"display": map[string]any{"name": title},
			"plugin":  map[string]any{"kind": kind, "spec": map[string]any{"calculation": "last-number"}},
			"queries": []any{map[string]any{"kind": "TimeSeriesQuery", "spec": map[string]any{"plugin": map[string]any{
				"kind": "PrometheusTimeSeriesQuery", "spec": map[string]any{"query": query}}}}},
		}}
	}
	const empty, broken, data = `lease_held{lease="no-such-lease"}`, `sum(lease_held`, `count(lease_held)`
	panels := map[string]any{
		"empty":       panel("empty", "StatChart", empty),
		"broken":      panel("broken", "StatChart", broken),
		"stat":        panel("stat", "StatChart", data),
		"emptychart":  panel("empty chart", "TimeSeriesChart", empty),
		"brokenchart": panel("broken chart", "TimeSeriesChart", broken),
		"chart":       panel("chart", "TimeSeriesChart", data),
	}
	var items []any
	// Panel keys: Perses takes no space in a $ref.
	for i, k := range []string{"empty", "broken", "stat", "emptychart", "brokenchart", "chart"} {
		if strings.HasSuffix(k, "chart") { // a TimeSeriesChart takes no calculation; it has a legend, as every shipped one
			panels[k].(map[string]any)["spec"].(map[string]any)["plugin"] = map[string]any{"kind": "TimeSeriesChart",
				"spec": map[string]any{"legend": map[string]any{"position": "bottom"}}}
		}
		items = append(items, map[string]any{"x": 8 * (i % 3), "y": 6 * (i / 3), "width": 8, "height": 6, "content": map[string]any{"$ref": "#/spec/panels/" + k}})
	}
	d, _ := json.Marshal(map[string]any{
		"kind":     "Dashboard",
		"metadata": map[string]any{"name": "check-the-check"},
		"spec": map[string]any{"display": map[string]any{"name": "check the check"}, "duration": "15m", "panels": panels,
			"layouts": []any{map[string]any{"kind": "Grid", "spec": map[string]any{"items": items}}}},
	})
	if err := srv.CreateDashboard(projectShipped, d); err != nil {
		t.Fatal(err)
	}
	got := map[string]panelState{}
	for _, p := range render(t, b, srv.DashboardURL(projectShipped, "check-the-check", persesRange, nil), len(panels)) {
		got[p.Title] = p
	}
	if p := got["empty"]; !p.noData() || p.drew() {
		t.Errorf("a stat whose query returns nothing: %+v, want No data and not drawn", p)
	}
	if p := got["empty chart"]; p.drew() || p.Errors != 0 {
		t.Errorf("a chart whose query returns nothing: %+v, want not drawn and no error", p)
	}
	for _, k := range []string{"broken", "broken chart"} {
		if p := got[k]; p.drew() || p.noData() || p.Errors == 0 {
			t.Errorf("a panel whose query Prometheus rejects (%s): %+v, want an error, not drawn", k, p)
		}
	}
	for _, k := range []string{"stat", "chart"} {
		if p := got[k]; !p.drew() {
			t.Errorf("a panel with data (%s): %+v, want drawn", k, p)
		}
	}
	if p := got["chart"]; p.Canvas == 0 {
		t.Errorf("a chart with data drew no canvas: %+v", p)
	}
	t.Logf("empty: %+v; broken: %+v; empty chart: %+v; broken chart: %+v", got["empty"], got["broken"], got["empty chart"], got["broken chart"])
}

// withoutDatasourceVariable removes what percli migrate makes of Grafana's datasource
// variable: a placeholder StaticListVariable (values "grafana migration not supported", a
// plugin these machines have no schemas for) that every query names as its datasource
// ("${datasource}"). Without both, the queries use Perses' default datasource, which is what
// a user migrating a one-Prometheus setup does by hand (docs/dashboards.md).
func withoutDatasourceVariable(t *testing.T, d []byte) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(d, &v); err != nil {
		t.Fatal(err)
	}
	spec := v["spec"].(map[string]any)
	var vars []any
	for _, x := range spec["variables"].([]any) {
		if x.(map[string]any)["spec"].(map[string]any)["name"] != "datasource" {
			vars = append(vars, x)
		}
	}
	spec["variables"] = vars
	removed := 0
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if ds, ok := x["datasource"].(map[string]any); ok && ds["name"] == "${datasource}" {
				delete(x, "datasource")
				removed++
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(spec)
	if removed == 0 {
		t.Errorf("percli migrate no longer names ${datasource} in any query: update withoutDatasourceVariable and docs/dashboards.md")
	}
	out, _ := json.Marshal(v)
	return out
}

// requireDrawn fails for each panel, other than those titled in skip, that did not draw; a
// panel titled in charts must have drawn a chart, not only text (its legend, say).
func requireDrawn(t *testing.T, panels []panelState, skip, charts []string) {
	t.Helper()
	drawn := 0
	for _, p := range panels {
		switch {
		case slices.Contains(skip, p.Title):
		case p.drew() && slices.Contains(charts, p.Title) && p.Canvas == 0:
			t.Errorf("panel %q is a chart but drew none: %q", p.Title, p.Text)
		case p.drew():
			drawn++
		case p.noData():
			t.Errorf("panel %q shows No data", p.Title)
		default:
			t.Errorf("panel %q did not draw (errors %d, loading %d, canvas %d, %d×%d px): %q", p.Title, p.Errors, p.Loading, p.Canvas, p.Width, p.Height, p.Text)
		}
	}
	t.Logf("%d of %d panels drew data", drawn, len(panels))
}

// render opens url and waits until the page shows want panels, each settled (drawn, "No
// data" or an error), the same on two reads in a row; it returns them.
func render(t *testing.T, b *browser, url string, want int) []panelState {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(browserWidth, browserHeight), chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	var last string
	var panels []panelState
	// The same settled state for 10 s: the UI retries a failed query (React Query: after 1,
	// 2 and 4 s), so an early error, such as a datasource looked up before the datasource
	// list arrived, must outlive those retries to count.
	stable, resized := 0, false
	deadline := time.Now().Add(2 * time.Minute)
	for ; time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](inspectPanels))
		if err != nil {
			t.Fatalf("read the panels of %s: %v", url, err)
		}
		panels = nil
		if err := json.Unmarshal([]byte(raw), &panels); err != nil {
			t.Fatal(err)
		}
		// react-grid-layout measures the grid's width when it mounts, and in a headless tab
		// that first measurement can be 0: every panel then stacks in one column of no width
		// (the DOM complete, nothing to see). A resize event makes it measure again, as
		// resizing the window would; the size check in drew() catches it if it does not.
		if len(panels) > 0 && !resized {
			if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`window.dispatchEvent(new Event('resize'))`)); err != nil {
				t.Fatal(err)
			}
			resized = true
		}
		settled := len(panels) == want
		for _, p := range panels {
			settled = settled && p.settled()
		}
		if settled && raw == last {
			if stable++; stable >= 5 {
				return panels
			}
		} else {
			stable = 0
		}
		last = raw
	}
	t.Fatalf("%s: the panels did not settle for 10 s within 2 minutes (want %d panels): %+v", url, want, panels)
	return nil
}

type browser struct{ ctx context.Context }

// newBrowser starts headless Chromium (internal/testenv/browser) with a window tall enough
// for every panel.
func newBrowser(t *testing.T) *browser {
	return &browser{ctx: testbrowser.Start(t, browserWidth, browserHeight)}
}

// screenshot writes the page down to its last panel as a PNG to path. It captures what the
// viewport shows, clipped: a capture beyond the viewport (chromedp's FullScreenshot) resizes
// the page while it draws, and Perses' grid re-lays its panels out at the wrong width.
func (b *browser) screenshot(t *testing.T, path string) {
	t.Helper()
	bottom, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](
		`Math.max(...Array.from(document.querySelectorAll('section[data-testid="panel"]')).map(p => p.getBoundingClientRect().bottom + window.scrollY))`))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	res, err := chromedp.Call(b.ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatPng,
		Clip:   &page.Viewport{X: 0, Y: 0, Width: browserWidth, Height: min(bottom+16, browserHeight), Scale: 1},
	})
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, res.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(res.Data))
}

// screenshotDir is SCREENSHOT_DIR when set (docs/images is refreshed that way), else a
// directory under the system temp dir that outlives the test, so a run's screenshots can be
// looked at afterwards.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("SCREENSHOT_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "lease-exporter-perses-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots go to %s", dir)
	return dir
}

func dashboardName(t *testing.T, d []byte) string {
	t.Helper()
	var v struct{ Metadata struct{ Name string } }
	if err := json.Unmarshal(d, &v); err != nil || v.Metadata.Name == "" {
		t.Fatalf("not a Perses dashboard (%v): %.200s", err, d)
	}
	return v.Metadata.Name
}

// panelKinds reads a Perses dashboard's panels: the plugin kinds by panel title (a title two
// panels share, such as lease detail's two "Expiry margin", has two), and how many there are.
func panelKinds(t *testing.T, d []byte) (map[string][]string, int) {
	t.Helper()
	var v struct {
		Spec struct {
			Panels map[string]struct {
				Spec struct {
					Display struct{ Name string }
					Plugin  struct{ Kind string }
				}
			}
		}
	}
	if err := json.Unmarshal(d, &v); err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]string{}
	for _, p := range v.Spec.Panels {
		kinds[p.Spec.Display.Name] = append(kinds[p.Spec.Display.Name], p.Spec.Plugin.Kind)
	}
	return kinds, len(v.Spec.Panels)
}

// titlesOnly returns, sorted, the titles that only panels of the plugin kind carry.
func titlesOnly(kinds map[string][]string, kind string) []string {
	var titles []string
	for title, ks := range kinds {
		if !slices.ContainsFunc(ks, func(k string) bool { return k != kind }) {
			titles = append(titles, title)
		}
	}
	slices.Sort(titles)
	return titles
}

// grafanaPanelsOfTypes returns the titles of a Grafana dashboard's panels of the given types, sorted.
func grafanaPanelsOfTypes(t *testing.T, file string, types ...string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Panels []struct{ Type, Title string }
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, p := range g.Panels {
		if slices.Contains(types, p.Type) {
			titles = append(titles, p.Title)
		}
	}
	slices.Sort(titles)
	return titles
}
