package statuspage

import (
	"cmp"
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"

	"github.com/lease-exporter/lease-exporter/statuspage/api"
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
func timelineOf(h *api.History, at time.Time, span time.Duration, window, pageURL string) *timeline {
	if h == nil {
		return nil
	}
	d := newDrawing(h, at, span)
	tl := &timeline{Start: stamp(d.start), End: stamp(at)}
	if pageURL != "" {
		for _, w := range timelineWindows {
			tl.Windows = append(tl.Windows, windowLink{Name: w.name, URL: withQuery(pageURL, "window", w.name),
				Current: w.name == window || (window == "" && w.span == 0)})
		}
	}
	for i, t := range h.Tenures {
		if i > 0 && h.Tenures[i-1].To != nil {
			if t.From.IsZero() { // unknown start: drawn from the last moment it can have begun at
				t.From = *h.Tenures[i-1].To
			}
			d.gap(*h.Tenures[i-1].To, t.From)
		}
		d.tenure(t, h.LeaderlessSince)
	}
	if h.LeaderlessSince != nil {
		d.gap(*h.LeaderlessSince, at)
	}
	tl.Bars, tl.Gaps = d.bars, d.gaps
	if len(d.words) == 0 {
		tl.Description = "No holder in this window."
	} else {
		tl.Description = strings.Join(d.words, ". ") + "."
	}
	return tl
}

// drawing is a timeline being drawn: the axis from start to at, the bars and gaps so far,
// the colours given to holders, and the picture in words.
type drawing struct {
	start, at  time.Time
	bars, gaps []stretch
	colours    map[string]int
	words      []string
}

// newDrawing starts the axis at at-span, or for span 0 at the first tenure kept (at least a
// minute back, so an empty history still gets an axis): the first moment known, its end for
// a tenure of unknown start.
func newDrawing(h *api.History, at time.Time, span time.Duration) *drawing {
	start := at.Add(-span)
	if span == 0 {
		start = at.Add(-time.Minute)
		if len(h.Tenures) > 0 {
			first := h.Tenures[0].From
			if first.IsZero() && h.Tenures[0].To != nil {
				first = *h.Tenures[0].To
			}
			if !first.IsZero() && first.Before(start) {
				start = first
			}
		}
	}
	return &drawing{start: start, at: at, colours: map[string]int{}}
}

// x is t's place on the axis, clamped to it.
func (d *drawing) x(t time.Time) float64 {
	return min(max(t.Sub(d.start).Seconds()/d.at.Sub(d.start).Seconds(), 0), 1) * timelineWidth
}

// gap draws the leaderless time from from to to, if it shows in the window.
func (d *drawing) gap(from, to time.Time) {
	if !to.After(d.start) || !to.After(from) {
		return
	}
	s := to.Sub(from).Seconds()
	title := "leaderless for " + seconds(&s) + ", " + stamp(from) + " to " + stamp(to)
	d.gaps = append(d.gaps, stretch{X: d.x(from), W: d.x(to) - d.x(from), Title: title})
	d.words = append(d.words, title)
}

// tenure draws t's bar, if it shows in the window; leaderlessSince cuts a tenure whose
// holder stopped renewing at its expiry.
func (d *drawing) tenure(t api.Tenure, leaderlessSince *time.Time) {
	end, ended, how := d.at, t.Ended, "holding"
	switch {
	case t.To != nil:
		end, how = *t.To, "ended: "+strings.ReplaceAll(ended, "_", " ")
	case leaderlessSince != nil:
		// The record still names its holder, but the lease ran out unrenewed.
		end, ended, how = *leaderlessSince, "expired", "not renewed: its lease expired"
	}
	if !end.After(d.start) && !(t.From.IsZero() && end.Equal(d.start)) { // unknown start: its end is the axis' start
		return
	}
	if _, ok := d.colours[t.Holder]; !ok {
		d.colours[t.Holder] = len(d.colours) % holderColours
	}
	holder := cmp.Or(t.Holder, "(no holder)")
	to := stamp(end)
	if end.Equal(d.at) {
		to = "now"
	}
	from, title := t.From, fmt.Sprintf("%s held it until %s, since when is unknown; %s", holder, to, how)
	if t.HeldSeconds != nil {
		held := end.Sub(from).Seconds()
		title = fmt.Sprintf("%s held it for %s, %s to %s; %s", holder, seconds(&held), stamp(from), to, how)
	} else if from.IsZero() {
		from = end // the first tenure kept: nothing says when it began
	}
	s := stretch{X: d.x(from), W: d.x(end) - d.x(from), Holder: t.Holder, Colour: d.colours[t.Holder], Ended: ended, Title: title}
	s.EndX, s.LabelX = max(s.X, s.X+s.W-3), s.X+4
	s.Label = barLabel(holder, ended, s.W)
	d.bars = append(d.bars, s)
	d.words = append(d.words, title)
}

// barLabel is what is written on a bar w units wide: the holder and how its tenure ended,
// else the holder alone, else nothing.
func barLabel(holder, ended string, w float64) string {
	label := holder
	if ended != "" {
		label += " · " + strings.ReplaceAll(ended, "_", " ")
	}
	switch {
	case float64(len([]rune(label)))*labelCharWidth+8 <= w:
		return label
	case float64(len([]rune(holder)))*labelCharWidth+8 <= w:
		return holder
	}
	return ""
}

// stripSpan is the span of the list page's strips: an hour shows whether a lock flaps.
const stripSpan = time.Hour

// strip draws h's last stripSpan up to at as the list row's small timeline: the bars and
// gaps of the detail page's, titled the same, without labels. It is written directly, not
// through a template: the list shows up to maxRows of them.
func strip(h *api.History, at time.Time) template.HTML {
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
