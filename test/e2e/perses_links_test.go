//go:build release

package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// renderedLink is a panel link as the Perses UI renders it: its name and its href, the
// variables in it replaced.
type renderedLink struct {
	Name string `json:"name"`
	Href string `json:"href"`
}

// readPanelLinks reads the links of the panel titled by its argument: the link button of a
// panel with one link, or the items of the menu a panel with several opens (clicked from
// script: the header shows its buttons only under the pointer). A link the header draws
// twice (its button and its tooltip's anchor) is one link.
const readPanelLinks = `(title) => {
  const p = Array.from(document.querySelectorAll('section[data-testid="panel"]')).find(s => {
    const h = s.querySelector('h6');
    return h && h.innerText.trim() === title;
  });
  if (!p) return '[]';
  const unique = (ls) => ls.filter((l, i) => ls.findIndex(m => m.name === l.name && m.href === l.href) === i);
  const menu = p.querySelector('button[aria-label="Panel links"]');
  if (!menu) {
    return JSON.stringify(unique(Array.from(p.querySelectorAll('header a[href]')).map(a => ({name: a.getAttribute('aria-label'), href: a.href}))));
  }
  if (!document.querySelector('[role="menu"]')) menu.click();
  return JSON.stringify(unique(Array.from(document.querySelectorAll('[role="menu"] a[href]')).map(a => ({name: a.innerText.trim(), href: a.href}))));
}`

// panelLinks waits until the panel titled title shows want links whose variables have their
// values (job is set on every dashboard), and returns them by name.
func panelLinks(t *testing.T, b *browser, title string, want int) map[string]*url.URL {
	t.Helper()
	arg, _ := json.Marshal(title)
	var links []renderedLink
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf("(%s)(%s)", readPanelLinks, arg)))
		if err != nil {
			t.Fatalf("read the links of panel %q: %v", title, err)
		}
		links = nil
		if err := json.Unmarshal([]byte(raw), &links); err != nil {
			t.Fatal(err)
		}
		rendered := len(links) == want
		for _, l := range links {
			u, err := url.Parse(l.Href)
			rendered = rendered && err == nil && u.Query().Get("var-job") == exporterJobName
		}
		if rendered {
			out := map[string]*url.URL{}
			for _, l := range links {
				out[l.Name], _ = url.Parse(l.Href)
			}
			t.Logf("panel %q links to %q", title, links)
			return out
		}
	}
	t.Fatalf("panel %q: want %d links with their variables rendered, the page shows %+v", title, want, links)
	return nil
}

// landing is what a dashboard page shows after a link was followed: where it is, its query
// parameters, and each variable's value as its selector shows it.
type landing struct {
	Path   string            `json:"path"`
	Search string            `json:"search"`
	Vars   map[string]string `json:"vars"`
}

const readLanding = `JSON.stringify({
  path: location.pathname,
  search: location.search,
  vars: Object.fromEntries(Array.from(document.querySelectorAll('[data-testid^="variable-"]:not([data-testid="variable-list"]):not([data-testid="variable-editor"])')).map(v =>
    [v.getAttribute('data-testid').slice('variable-'.length), (v.querySelector('input') || {}).value || ''])),
})`

// follow opens link as a person clicking it would, and waits until the page is the
// dashboard at path with the variables of want chosen ("" for any value), the same twice in
// a row; it fails if the time range is not the one the link carried (start and end, in ms,
// the window the source dashboard showed: Perses writes them back to the second).
func follow(t *testing.T, b *browser, link *url.URL, path string, want map[string]string) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(link.String())); err != nil {
		t.Fatalf("open %s: %v", link, err)
	}
	var got landing
	last := ""
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](readLanding))
		if err != nil {
			t.Fatalf("read the page %s: %v", link, err)
		}
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatal(err)
		}
		ok := got.Path == path && raw == last
		for k, v := range want {
			ok = ok && got.Vars[k] != "" && (v == "" || got.Vars[k] == v)
		}
		if ok {
			q, _ := url.ParseQuery(got.Search)
			for _, p := range []string{"start", "end"} {
				if sent, kept := millis(link.Query().Get(p)), millis(q.Get(p)); sent == 0 || kept < sent-1000 || kept > sent+1000 {
					t.Errorf("%s: %s=%s, the link's %s=%s", path, p, q.Get(p), p, link.Query().Get(p))
				}
			}
			t.Logf("followed to %s%s: variables %v", got.Path, got.Search, got.Vars)
			return
		}
		last = raw
	}
	t.Fatalf("following %s: the page shows %+v, want %s with variables %v", link, got, path, want)
}

func millis(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// followDashboardLinks, on the lease detail: its first panel (Holder) carries its own link
// back to the overview and the dashboard's links to the other dashboards, each to the same
// project with the job, the cluster and the time range shown; the overview's opens with them.
func followDashboardLinks(t *testing.T, b *browser) {
	t.Helper()
	links := panelLinks(t, b, "Holder", 3)
	for name, target := range map[string]string{
		"All leases":            "lease-exporter-overview",
		"Node heartbeats":       "lease-exporter-node-heartbeats",
		"lease-exporter health": "lease-exporter-health",
	} {
		l, ok := links[name]
		switch {
		case !ok:
			t.Errorf("the Holder panel has no link %q", name)
		case l.Path != "/projects/"+projectShipped+"/dashboards/"+target:
			t.Errorf("link %q goes to %s, want the project's %s", name, l.Path, target)
		case millis(l.Query().Get("end"))-millis(l.Query().Get("start")) != 15*60*1000:
			t.Errorf("link %q carries the range %s to %s, want the 15 minutes shown", name, l.Query().Get("start"), l.Query().Get("end"))
		}
	}
	if l, ok := links["All leases"]; ok {
		follow(t, b, l, "/projects/"+projectShipped+"/dashboards/lease-exporter-overview", map[string]string{"job": exporterJobName})
	}
}

// followDrillDown, on the multi-cluster overview: the table's drill-down to a lock's detail
// carries the job and the one cluster chosen; the lease detail opens on them, its namespace
// and lease chosen there (a Perses link is the panel's, not one row's).
func followDrillDown(t *testing.T, b *browser) {
	t.Helper()
	links := panelLinks(t, b, "Leader-election leases", 1)
	l, ok := links["Lease detail"]
	if !ok {
		t.Fatalf("the table has no link \"Lease detail\": %v", links)
	}
	if got := l.Query().Get("var-cluster"); got != clusterName {
		t.Errorf("the drill-down passes cluster %q, want %q", got, clusterName)
	}
	follow(t, b, l, "/projects/"+projectMultiCluster+"/dashboards/lease-exporter-lease-detail",
		map[string]string{"job": exporterJobName, "cluster": clusterName, "namespace": "", "lease": ""})
}
