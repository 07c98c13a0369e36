package statuspage

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// svgNode is an element of the page's timeline, as a browser's DOM would have it.
type svgNode struct {
	tag   string
	attrs map[string]string
	title string // its <title> child's text
}

// timelineNodes parses page and returns the elements inside svg#timeline.
func timelineNodes(t *testing.T, page string) []svgNode {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var out []svgNode
	var inTimeline func(n *html.Node, in bool)
	inTimeline = func(n *html.Node, in bool) {
		if n.Type == html.ElementNode {
			attrs := map[string]string{}
			for _, a := range n.Attr {
				attrs[a.Key] = a.Val
			}
			if n.Data == "svg" && attrs["id"] == "timeline" {
				in = true
			} else if in {
				sn := svgNode{tag: n.Data, attrs: attrs}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode && c.Data == "title" && c.FirstChild != nil {
						sn.title = c.FirstChild.Data
					}
				}
				out = append(out, sn)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			inTimeline(c, in)
		}
	}
	inTimeline(doc, false)
	return out
}

func byClass(nodes []svgNode, tag, class string) []svgNode {
	var out []svgNode
	for _, n := range nodes {
		if n.tag == tag && strings.Fields(n.attrs["class"])[0] == class {
			out = append(out, n)
		}
	}
	return out
}

func attrFloat(t *testing.T, n svgNode, key string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(n.attrs[key], 64)
	if err != nil {
		t.Fatalf("%s %s=%q: %v", n.tag, key, n.attrs[key], err)
	}
	return v
}

// The fixture's election over all of its history (the last minute): a held from 0 to 25 s
// and expired, nobody for 2 s, b from 27 s released at 40 s, nobody for 1 s, c from 41 s
// holding at 51 s. Each tenure is a bar in its place and size, titled with who, how long
// and how it ended; each leaderless time a gap; colour is never the only signal.
func TestDetailPageDrawsTheTimeline(t *testing.T) {
	h, _ := fixture(t, "holder")
	resp, page := get(t, h, "/leases/orders/worker")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	nodes := timelineNodes(t, page)
	// The axis spans 51 s - 1 min = -9 s to 51 s: 1000 units for 60 s.
	unit := func(s float64) float64 { return (s + 9) / 60 * 1000 }
	type want struct {
		holder, ended, title string
		from, to             float64
	}
	wants := []want{
		{"a", "expired", "a held it for 25.0s, 2026-", 0, 25},
		{"b", "released", "b held it for 13.0s, 2026-", 27, 40},
		{"c", "", "c held it for 10.0s, 2026-", 41, 51},
	}
	tenures := byClass(nodes, "g", "tenure")
	if len(tenures) != len(wants) {
		t.Fatalf("%d tenure bars, want %d: %+v", len(tenures), len(wants), nodes)
	}
	bars := byClass(nodes, "rect", "h0")
	bars = append(bars, byClass(nodes, "rect", "h1")...)
	bars = append(bars, byClass(nodes, "rect", "h2")...)
	if len(bars) != 3 {
		t.Fatalf("bars coloured h0, h1, h2: %d, want one each for a, b, c", len(bars))
	}
	for i, w := range wants {
		g := tenures[i]
		if g.attrs["data-holder"] != w.holder || g.attrs["data-ended"] != w.ended || !strings.HasPrefix(g.title, w.title) {
			t.Errorf("tenure %d: holder %q ended %q title %q, want %q %q %q…", i, g.attrs["data-holder"], g.attrs["data-ended"], g.title, w.holder, w.ended, w.title)
		}
		how := "holding"
		if w.ended != "" {
			how = "ended: " + w.ended
		}
		if !strings.HasSuffix(g.title, how) {
			t.Errorf("tenure %d title %q does not end with %q", i, g.title, how)
		}
		bar := bars[i]
		if x, wd := attrFloat(t, bar, "x"), attrFloat(t, bar, "width"); fmt.Sprintf("%.1f %.1f", x, wd) != fmt.Sprintf("%.1f %.1f", unit(w.from), unit(w.to)-unit(w.from)) {
			t.Errorf("tenure %d bar at x=%.2f width %.2f, want %.2f and %.2f", i, x, wd, unit(w.from), unit(w.to)-unit(w.from))
		}
	}
	ends := byClass(nodes, "rect", "end")
	if len(ends) != 2 || ends[0].attrs["class"] != "end end-expired" || ends[1].attrs["class"] != "end end-released" {
		t.Errorf("end marks %+v, want one for a's expiry and one for b's release", ends)
	}
	gaps := byClass(nodes, "rect", "gap")
	if len(gaps) != 2 || !strings.HasPrefix(gaps[0].title, "leaderless for 2.0s") || !strings.HasPrefix(gaps[1].title, "leaderless for 1.0s") {
		t.Fatalf("gaps %+v, want 2 s and 1 s leaderless", gaps)
	}
	if x, w := attrFloat(t, gaps[0], "x"), attrFloat(t, gaps[0], "width"); fmt.Sprintf("%.1f %.1f", x, w) != fmt.Sprintf("%.1f %.1f", unit(25), unit(27)-unit(25)) {
		t.Errorf("first gap at x=%.2f width %.2f, want 25 s to 27 s", x, w)
	}
	// Colour is not the only signal: wide bars carry the holder and the ending in text, and
	// the SVG describes itself for screen readers.
	var labels []string
	for _, n := range nodes {
		if n.tag == "text" {
			labels = append(labels, n.attrs["x"])
		}
	}
	if !strings.Contains(page, ">a · expired</text>") || !strings.Contains(page, ">b · released</text>") || !strings.Contains(page, ">c</text>") {
		t.Errorf("bar labels missing; texts at %v", labels)
	}
	if !strings.Contains(page, `<desc id="timeline-desc">a held it for 25.0s`) {
		t.Errorf("the timeline has no description for screen readers")
	}
	if !strings.Contains(page, `<strong aria-current="page">all</strong>`) || !strings.Contains(page, `href="/leases/orders/worker?window=15m"`) {
		t.Errorf("window links: want all current and a link to 15m")
	}
}

// A window clips the picture to its span: over 15 minutes the 51 s of history sit at the
// right end; a window the page does not offer is a clear 400.
func TestTimelineWindow(t *testing.T) {
	h, _ := fixture(t, "holder")
	_, page := get(t, h, "/leases/orders/worker?window=15m")
	nodes := timelineNodes(t, page)
	bars := byClass(nodes, "g", "tenure")
	first := byClass(nodes, "rect", "h0")
	if len(bars) != 3 || len(first) != 1 {
		t.Fatalf("15m window: %d bars, want 3", len(bars))
	}
	if x := attrFloat(t, first[0], "x"); fmt.Sprintf("%.1f", x) != fmt.Sprintf("%.1f", (900.0-51)/900*1000) {
		t.Errorf("a's bar starts at %.2f, want 51 s before the end of a 15-minute axis", x)
	}
	if !strings.Contains(page, `<strong aria-current="page">15m</strong>`) {
		t.Errorf("15m is not marked as the current window")
	}
	resp, page := get(t, h, "/leases/orders/worker?window=2d")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, `window &#34;2d&#34; is not one the timeline offers: use one of 15m, 1h, 6h, 24h, all`) {
		t.Errorf("window=2d: %d, page %s", resp.StatusCode, page)
	}
	// A lock that keeps no history has no timeline.
	if _, page := get(t, h, "/leases/kube-node-lease/node-1"); strings.Contains(page, `id="timeline"`) {
		t.Errorf("the node heartbeat, which keeps no history, has a timeline")
	}
}

// A lock whose holder stopped renewing still names it; the bar ends where its lease ran out
// (15 s), marked expired, and the leaderless time since is a gap up to the judgement (51 s).
func TestTimelineEndsAnUnrenewedTenureAtItsExpiry(t *testing.T) {
	h, _ := fixture(t, "holder")
	_, page := get(t, h, "/leases/billing/ledger")
	nodes := timelineNodes(t, page)
	unit := func(s float64) float64 { return (s + 9) / 60 * 1000 }
	tenures, bars, gaps := byClass(nodes, "g", "tenure"), byClass(nodes, "rect", "h0"), byClass(nodes, "rect", "gap")
	if len(tenures) != 1 || len(bars) != 1 || len(gaps) != 1 {
		t.Fatalf("%d tenures, %d bars, %d gaps, want 1 each", len(tenures), len(bars), len(gaps))
	}
	if g := tenures[0]; g.attrs["data-ended"] != "expired" || !strings.HasPrefix(g.title, "ledger-0 held it for 15.0s") || !strings.HasSuffix(g.title, "not renewed: its lease expired") {
		t.Errorf("tenure %+v, want ledger-0 for 15 s, not renewed", g)
	}
	if w := attrFloat(t, bars[0], "width"); fmt.Sprintf("%.1f", w) != fmt.Sprintf("%.1f", unit(15)-unit(0)) {
		t.Errorf("bar width %.2f, want 0 to 15 s", w)
	}
	if x, w := attrFloat(t, gaps[0], "x"), attrFloat(t, gaps[0], "width"); fmt.Sprintf("%.1f %.1f", x, w) != fmt.Sprintf("%.1f %.1f", unit(15), unit(51)-unit(15)) ||
		!strings.HasPrefix(gaps[0].title, "leaderless for 36.0s") {
		t.Errorf("gap at %.2f width %.2f (%q), want 15 s to 51 s", x, w, gaps[0].title)
	}
}

// Each listed lock that keeps a history carries its last hour as a strip: the detail page's
// bars and gaps, titled alike, scaled to an hour; node heartbeats, which keep none, have none.
func TestListRowsCarryTheLastHour(t *testing.T) {
	h, _ := fixture(t, "holder")
	_, page := get(t, h, "/leases?class=")
	row := page[strings.Index(page, `data-namespace="orders"`):]
	row = row[:strings.Index(row, "</tr>")]
	nodes := timelineNodesOf(t, row, "strip")
	bars, gaps := byClass(nodes, "rect", "h0"), byClass(nodes, "rect", "gap")
	bars = append(bars, byClass(nodes, "rect", "h1")...)
	bars = append(bars, byClass(nodes, "rect", "h2")...)
	if len(bars) != 3 || len(gaps) != 2 {
		t.Fatalf("orders/worker's strip: %d bars, %d gaps, want 3 and 2", len(bars), len(gaps))
	}
	// An hour is 1000 units: a's 25 s are 6.9 of them, ending 26 s before the end.
	if x, w := attrFloat(t, bars[0], "x"), attrFloat(t, bars[0], "width"); fmt.Sprintf("%.1f %.1f", x, w) != fmt.Sprintf("%.1f %.1f", 1000-51.0/3.6, 25/3.6) {
		t.Errorf("a's bar at %.1f width %.1f", x, w)
	}
	if !strings.HasPrefix(bars[1].title, "b held it for 13.0s") || !strings.HasSuffix(bars[1].title, "ended: released") || bars[1].attrs["data-ended"] != "released" {
		t.Errorf("b's bar: %+v", bars[1])
	}
	if _, page := get(t, h, "/leases?class=node-heartbeat"); strings.Contains(page, `class="strip"`) {
		t.Error("a node heartbeat, which keeps no history, has a strip")
	}
}

// timelineNodesOf parses fragment and returns the elements inside the first svg of class.
func timelineNodesOf(t *testing.T, fragment, class string) []svgNode {
	t.Helper()
	return timelineNodes(t, strings.Replace(fragment, `<svg class="`+class+`"`, `<svg id="timeline" class="`+class+`"`, 1))
}

// The cadence sparkline draws the last renewal intervals oldest first, each titled, against
// a dashed line at the lease duration: the fixture's five 2 s intervals and three 3 s ones
// under worker's 15 s.
func TestDetailPageDrawsTheCadence(t *testing.T) {
	h, _ := fixture(t, "holder")
	_, page := get(t, h, "/leases/orders/worker")
	var bars []string
	for _, m := range regexp.MustCompile(`<rect x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)"><title>([^<]+)</title></rect>`).FindAllStringSubmatch(page[strings.Index(page, `<svg id="cadence"`):], -1) {
		bars = append(bars, m[3]+"@"+m[2])
	}
	// 40 units high less 2, the top being the 15 s duration: 2 s is 5.07, 3 s is 7.60.
	if want := "2.0s@5.1 2.0s@5.1 2.0s@5.1 2.0s@5.1 2.0s@5.1 3.0s@7.6 3.0s@7.6 3.0s@7.6"; strings.Join(bars, " ") != want {
		t.Errorf("cadence bars %q, want %q", strings.Join(bars, " "), want)
	}
	if !strings.Contains(page, `<line class="duration" x1="0" x2="200" y1="2.0" y2="2.0"><title>lease duration 15s</title></line>`) {
		t.Error("no line at the lease duration")
	}
}
