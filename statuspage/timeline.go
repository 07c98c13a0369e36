package statuspage

import (
	"fmt"
	"html"
	"html/template"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The timeline answers at a glance what the history table makes a reader work out: whether
// leadership flaps, how long each gap was, how each tenure ended. It is server-rendered SVG
// (the page loads nothing and runs one script) drawn in a fixed viewBox that the browser
// scales to the page's width.
const (
	timelineWidth = 1000.0
	// labelCharWidth is a generous width of one character of the bars' 12-unit font: a
	// holder is written on its bar only where it fits.
	labelCharWidth = 7.5
	// holderColours is the size of the page's palette (.h0 to .h5 in layout.html); holders
	// take colours in order of first tenure and share them beyond six.
	holderColours = 6
)

// timelineWindows are the spans a reader can pick, "" being all of the kept history.
var timelineWindows = []struct {
	name string
	span time.Duration
}{{"15m", 15 * time.Minute}, {"1h", time.Hour}, {"6h", 6 * time.Hour}, {"24h", 24 * time.Hour}, {"all", 0}}

// windowSpan is the span of the window named name ("" for all); false if there is none.
func windowSpan(name string) (time.Duration, bool) {
	if name == "" {
		return 0, true
	}
	for _, w := range timelineWindows {
		if w.name == name {
			return w.span, true
		}
	}
	return 0, false
}

// windowNames lists the windows for an error message.
func windowNames() string {
	var names []string
	for _, w := range timelineWindows {
		names = append(names, w.name)
	}
	return strings.Join(names, ", ")
}

type timeline struct {
	// Windows link to the same page over each window; Current is the one shown.
	Windows     []windowLink
	Start, End  string // the axis' ends
	Bars, Gaps  []stretch
	Description string // the whole picture in words, for screen readers
}

type windowLink struct {
	Name, URL string
	Current   bool
}

// stretch is a tenure (a bar) or a leaderless time (a gap) in viewBox units.
type stretch struct {
	X, W float64
	// EndX is where a tenure's end mark goes, LabelX where its label starts.
	EndX, LabelX float64
	Holder       string
	Colour       int    // index into the palette, by holder
	Ended        string // how a tenure ended ("" while it lasts); empty for gaps
	Title        string // what a pointer or a screen reader reads: who, when, how long, how it ended
	Label        string // written on the bar when it fits
}

// timelineOf draws h from at-span to at (all of the kept history for span 0). pageURL is
// the page's own path and query, without window, for the links to the other windows ("":
// none).
func timelineOf(h *History, at time.Time, span time.Duration, window, pageURL string) *timeline {
	if h == nil {
		return nil
	}
	start := at.Add(-span)
	if span == 0 {
		start = at.Add(-time.Minute) // an empty history still gets an axis
		if len(h.Tenures) > 0 && h.Tenures[0].From.Before(start) {
			start = h.Tenures[0].From
		}
	}
	tl := &timeline{Start: stamp(start), End: stamp(at)}
	if pageURL != "" {
		for _, w := range timelineWindows {
			tl.Windows = append(tl.Windows, windowLink{Name: w.name, URL: withQuery(pageURL, "window", w.name),
				Current: w.name == window || (window == "" && w.span == 0)})
		}
	}
	total := at.Sub(start).Seconds()
	x := func(t time.Time) float64 {
		return min(max(t.Sub(start).Seconds()/total, 0), 1) * timelineWidth
	}
	colours := map[string]int{}
	var words []string
	addGap := func(from, to time.Time) {
		if !to.After(start) || !to.After(from) {
			return
		}
		d := to.Sub(from).Seconds()
		title := "leaderless for " + seconds(&d) + ", " + stamp(from) + " to " + stamp(to)
		tl.Gaps = append(tl.Gaps, stretch{X: x(from), W: x(to) - x(from), Title: title})
		words = append(words, title)
	}
	for i, t := range h.Tenures {
		if i > 0 && h.Tenures[i-1].To != nil {
			addGap(*h.Tenures[i-1].To, t.From)
		}
		end, ended, how := at, t.Ended, "holding"
		switch {
		case t.To != nil:
			end, how = *t.To, "ended: "+strings.ReplaceAll(ended, "_", " ")
		case h.LeaderlessSince != nil:
			// The record still names its holder, but the lease ran out unrenewed.
			end, ended, how = *h.LeaderlessSince, "expired", "not renewed: its lease expired"
		}
		if !end.After(start) {
			continue
		}
		if _, ok := colours[t.Holder]; !ok {
			colours[t.Holder] = len(colours) % holderColours
		}
		holder := t.Holder
		if holder == "" {
			holder = "(no holder)"
		}
		held := end.Sub(t.From).Seconds()
		to := stamp(end)
		if end.Equal(at) {
			to = "now"
		}
		title := fmt.Sprintf("%s held it for %s, %s to %s; %s", holder, seconds(&held), stamp(t.From), to, how)
		s := stretch{X: x(t.From), W: x(end) - x(t.From), Holder: t.Holder, Colour: colours[t.Holder], Ended: ended, Title: title}
		s.EndX, s.LabelX = max(s.X, s.X+s.W-3), s.X+4
		label := holder
		if ended != "" {
			label += " · " + strings.ReplaceAll(ended, "_", " ")
		}
		if float64(len([]rune(label)))*labelCharWidth+8 <= s.W {
			s.Label = label
		} else if float64(len([]rune(holder)))*labelCharWidth+8 <= s.W {
			s.Label = holder
		}
		tl.Bars = append(tl.Bars, s)
		words = append(words, title)
	}
	if h.LeaderlessSince != nil {
		addGap(*h.LeaderlessSince, at)
	}
	if len(words) == 0 {
		tl.Description = "No holder in this window."
	} else {
		tl.Description = strings.Join(words, ". ") + "."
	}
	return tl
}

// withQuery sets key to value in the query of path, a path with an optional query.
func withQuery(path, key, value string) string {
	u, err := url.Parse(path)
	if err != nil {
		return path
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// stripSpan is the span of the list page's strips: an hour shows whether a lock flaps.
const stripSpan = time.Hour

// strip draws h's last stripSpan up to at as the list row's small timeline: the bars and
// gaps of the detail page's, titled the same, without labels. It is written directly, not
// through a template: the list shows up to maxRows of them.
func strip(h *History, at time.Time) template.HTML {
	tl := timelineOf(h, at, stripSpan, "", "")
	var b strings.Builder
	b.WriteString(`<svg class="strip" viewBox="0 0 1000 44" preserveAspectRatio="none" role="img"><title>Last hour: `)
	b.WriteString(html.EscapeString(tl.Description))
	b.WriteString(`</title><rect class="axis" x="0" y="4" width="1000" height="36"/>`)
	for _, g := range tl.Gaps {
		fmt.Fprintf(&b, `<rect class="gap" x="%.1f" y="4" width="%.1f" height="36"><title>%s</title></rect>`, g.X, g.W, html.EscapeString(g.Title))
	}
	for _, s := range tl.Bars {
		fmt.Fprintf(&b, `<rect class="h%d" x="%.1f" y="4" width="%.1f" height="36" data-ended="%s"><title>%s</title></rect>`,
			s.Colour, s.X, s.W, html.EscapeString(s.Ended), html.EscapeString(s.Title))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every value above is escaped
}

// sparkline draws the renewal intervals, oldest first, as bars against the lease duration
// (a dashed line where one interval would let the lease run out), each titled with its
// length: whether renewals slowed before a loss shows as bars climbing toward the line.
func sparkline(intervals []float64, duration *int32) template.HTML {
	if len(intervals) == 0 {
		return ""
	}
	top := slices.Max(intervals)
	if duration != nil {
		top = max(top, float64(*duration))
	}
	if top <= 0 {
		top = 1
	}
	const w, h = 200.0, 40.0
	bw := w / float64(len(intervals))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="cadence" class="cadence" viewBox="0 0 %.0f %.0f" role="img"><title>Renewal intervals, oldest first: `, w, h)
	for i, iv := range intervals {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(seconds(&iv))
	}
	b.WriteString(`</title>`)
	for i, iv := range intervals {
		bh := max(iv/top*(h-2), 1)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`, float64(i)*bw+1, h-bh, bw-2, bh, seconds(&iv))
	}
	if duration != nil {
		y := h - float64(*duration)/top*(h-2)
		fmt.Fprintf(&b, `<line class="duration" x1="0" x2="%.0f" y1="%.1f" y2="%.1f"><title>lease duration %ds</title></line>`, w, y, y, *duration)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // numbers and seconds() only
}
