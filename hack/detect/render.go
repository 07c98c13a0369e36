package main

import (
	"fmt"
	"html"
	"math"
	"os"
	"slices"
	"strings"
)

// docs/detection.md is prose written by hand around one generated section, between these
// two lines, so that a rerun of the benchmark cannot leave the table and the JSON apart.
const (
	beginMarker = "<!-- BEGIN generated: detection table (go run ./hack/detect -render) -->"
	endMarker   = "<!-- END generated: detection table -->"
)

// render regenerates docs/detection.md's table and docs/detection.svg from
// docs/detection.json, without rerunning the faults.
func render(jsonPath, docPath, svgPath string) error {
	r, err := readResults(jsonPath)
	if err != nil {
		return err
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		return err
	}
	out, err := renderDoc(string(doc), r)
	if err != nil {
		return fmt.Errorf("%s: %w", docPath, err)
	}
	if err := os.WriteFile(docPath, []byte(out), 0o644); err != nil {
		return err
	}
	return os.WriteFile(svgPath, []byte(renderChart(r)), 0o644)
}

// renderDoc replaces what lies between the marker lines with renderTable, blank lines
// around it so that Markdown sees a table and not the end of the HTML comment.
func renderDoc(doc string, r *Results) (string, error) {
	b := findLine(doc, beginMarker, 0)
	if b < 0 {
		return "", fmt.Errorf("no line %q", beginMarker)
	}
	start := b + len(beginMarker)
	end := findLine(doc, endMarker, start)
	if end < 0 {
		return "", fmt.Errorf("no line %q after %q", endMarker, beginMarker)
	}
	return doc[:start] + "\n\n" + renderTable(r) + "\n" + doc[end:], nil
}

// findLine is the offset of the first line at or after from that is exactly line, or -1:
// prose that quotes a marker must not be taken for it.
func findLine(doc, line string, from int) int {
	for i := from; ; {
		j := strings.Index(doc[i:], line)
		if j < 0 {
			return -1
		}
		i += j
		end := i + len(line)
		if (i == 0 || doc[i-1] == '\n') && (end == len(doc) || doc[end] == '\n') {
			return i
		}
		i = end
	}
}

func renderTable(r *Results) string {
	var b strings.Builder
	b.WriteString("| Fault | Elector | Must page |")
	for _, s := range r.Sets {
		fmt.Fprintf(&b, " %s |", cellText(setName(s)))
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(r.Sets)) + "\n")
	for _, f := range r.Faults {
		fault := cellText(f.Title)
		if !f.Ran {
			fault += " *(not run: " + cellText(f.NotRun) + ")*"
		}
		elector := cellText(f.Elector)
		if elector == "" {
			elector = "—"
		}
		must := "no"
		if f.MustPage {
			must = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", fault, elector, must)
		for _, s := range r.Sets {
			fmt.Fprintf(&b, " %s |", outcomeCell(f, f.Results[s.ID]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	known := map[string]bool{}
	for _, s := range r.Sets {
		known[s.ID] = true
		b.WriteString(summaryLine(r, s) + "\n")
	}
	// An alert without a known set label is a misconfigured rule, and it paged someone
	// all the same: leaving it out of every set's count would hide it.
	stray := 0
	for _, n := range r.Unattributed {
		if !known[n.Set] {
			stray++
		}
	}
	if stray > 0 {
		fmt.Fprintf(&b, "- %d more false notifications carried no known set label\n", stray)
	}
	st := r.Settings
	fmt.Fprintf(&b, "\nMeasured at %s on Kubernetes %s, %s. Prometheus scraped every %s and "+
		"evaluated rules every %s; Alertmanager's group_wait was %s. Times run from the fault "+
		"to the first page, and from the repair to the last resolved notification. A fault "+
		"that did not run counts as neither a page nor a miss.\n",
		cellText(r.Commit), cellText(r.Kubernetes), r.Started.UTC().Format("2006-01-02"),
		seconds(st.ScrapeIntervalSeconds), seconds(st.EvaluationIntervalSeconds), seconds(st.GroupWaitSeconds))
	if r.Rescored != "" {
		fmt.Fprintf(&b, "\nThe pages of the rows that must not page were sorted into false and other again by the scoring at %s (`go run ./hack/detect -rescore`); the pages are the run's.\n", cellText(r.Rescored))
	}
	return b.String()
}

// outcomeCell is what one set did on one fault, in words an on-call would use: whether it
// paged when it had to, or paged when it must not have.
func outcomeCell(f Fault, o Outcome) string {
	if !f.Ran {
		return "not run"
	}
	var cell string
	switch {
	case f.MustPage && o.Paged:
		cell = "**paged**"
		if o.PageSeconds != nil {
			cell += " " + seconds(*o.PageSeconds)
		}
		cell += named(o.Alerts)
	case f.MustPage:
		return "missed"
	case len(o.False) == 0 && len(o.Other) == 0:
		return "—"
	case len(o.False) == 0:
		return fmt.Sprintf("— (other: ×%d%s)", len(o.Other), named(alertnames(o.Other)))
	default:
		cell = fmt.Sprintf("**false page** ×%d", len(o.False)) + named(alertnames(o.False))
		if len(o.Other) > 0 {
			cell += fmt.Sprintf(" · other: ×%d%s", len(o.Other), named(alertnames(o.Other)))
		}
	}
	if o.ResolveSeconds != nil {
		cell += " · resolved " + seconds(*o.ResolveSeconds)
	}
	return cell
}

func summaryLine(r *Results, s RuleSet) string {
	var must, paged, falses, others int
	var times []float64
	for _, f := range r.Faults {
		o := f.Results[s.ID]
		falses += len(o.False)
		others += len(o.Other)
		if !f.Ran || !f.MustPage {
			continue
		}
		must++
		if o.Paged {
			paged++
			if o.PageSeconds != nil {
				times = append(times, *o.PageSeconds)
			}
		}
	}
	for _, n := range r.Unattributed {
		if n.Set == s.ID {
			falses++
		}
	}
	med := "none"
	if len(times) > 0 {
		med = seconds(median(times))
	}
	return fmt.Sprintf("- **%s**: paged %d/%d must-page faults, %d false pages, %d other pages on must-not-page faults, median time to page %s",
		cellText(setName(s)), paged, must, falses, others, med)
}

func median(xs []float64) float64 {
	xs = slices.Sorted(slices.Values(xs))
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// alertnames are the distinct alertnames of ns, sorted so the cell does not depend on
// arrival order.
func alertnames(ns []Notification) []string {
	var names []string
	for _, n := range ns {
		names = append(names, n.Alertname)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func named(alerts []string) string {
	if len(alerts) == 0 {
		return ""
	}
	return " (" + strings.Join(alerts, ", ") + ")"
}

// seconds rounds half away from zero; fmt's %.0f rounds half to even, and a table where
// 2.5 s and 3.5 s both differ from their neighbours' rounding would read as noise.
func seconds(x float64) string { return fmt.Sprintf("%d s", int64(math.Round(x))) }

func setName(s RuleSet) string {
	if s.Title != "" {
		return s.Title
	}
	return s.ID
}

// cellText keeps a title from ending its table cell or row.
func cellText(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// The chart's geometry, in SVG user units (pixels). Bars run from axisLeft to axisRight;
// a miss is drawn past axisRight, where no time can reach.
const (
	chartWidth       = 760
	axisLeft         = 16
	axisRight        = chartWidth - 16 - 72
	missedX, missedW = axisRight + 8, 56
	barH, barStep    = 12, 15
	legendStep       = 16
)

var barColours = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"}

// renderChart draws the time to page of every must-page fault that ran, one bar per set.
// Faults that must not page are left to the table: a false page has no length to draw.
func renderChart(r *Results) string {
	var faults []Fault
	longest := 0.0
	for _, f := range r.Faults {
		if !f.Ran || !f.MustPage {
			continue
		}
		faults = append(faults, f)
		for _, s := range r.Sets {
			if o := f.Results[s.ID]; o.Paged && o.PageSeconds != nil {
				longest = max(longest, *o.PageSeconds)
			}
		}
	}
	if longest == 0 {
		longest = 60 // nothing paged: an axis of a minute still shows every set missed
	}
	step, top := axisTicks(longest)
	x := func(s float64) float64 { return axisLeft + s/top*(axisRight-axisLeft) }

	var b strings.Builder
	y := 8
	for i, s := range r.Sets {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			axisLeft, y, barColours[i%len(barColours)], axisLeft+18, y+10, html.EscapeString(setName(s)))
		y += legendStep
	}
	plotTop := y + 8
	y = plotTop
	var bars strings.Builder
	for _, f := range faults {
		title := f.Title
		if f.Elector != "" {
			title += " (" + f.Elector + ")"
		}
		fmt.Fprintf(&bars, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", axisLeft, y+12, html.EscapeString(title))
		y += 18
		for i, s := range r.Sets {
			o := f.Results[s.ID]
			if o.Paged && o.PageSeconds != nil {
				end := x(*o.PageSeconds)
				fmt.Fprintf(&bars, `<rect class="bar" x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+
					`<text x="%.1f" y="%d">%s</text>`+"\n",
					axisLeft, y, end-axisLeft, barH, barColours[i%len(barColours)], end+4, y+10, seconds(*o.PageSeconds))
			} else {
				// Outlined in the set's colour: the legend then says whose miss it is.
				fmt.Fprintf(&bars, `<rect class="missed" x="%d" y="%d" width="%d" height="%d" fill="url(#hatch)" stroke="%s" stroke-width="1.5"/>`+
					`<text x="%d" y="%d" text-anchor="middle" font-size="10" fill="#333" stroke="#fff" stroke-width="3" paint-order="stroke">missed</text>`+"\n",
					missedX, y, missedW, barH, barColours[i%len(barColours)], missedX+missedW/2, y+10)
			}
			y += barStep
		}
		y += 10
	}
	axisY := y + 4

	var out strings.Builder
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		chartWidth, axisY+44, chartWidth, axisY+44)
	out.WriteString("<title>Seconds from each fault to the first page, by alerting rule set</title>\n")
	out.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="6" height="6" fill="#eee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbb" stroke-width="3"/></pattern></defs>` + "\n")
	out.WriteString(b.String())
	// Grid lines go under the bars, so they are written first.
	for t := 0.0; t <= top; t += step {
		fmt.Fprintf(&out, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e5e5e5"/>`+"\n", x(t), plotTop, x(t), axisY)
	}
	out.WriteString(bars.String())
	fmt.Fprintf(&out, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#666"/>`+"\n", axisLeft, axisY, axisRight, axisY)
	for t := 0.0; t <= top; t += step {
		fmt.Fprintf(&out, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#666"/><text x="%.1f" y="%d" text-anchor="middle">%.0f</text>`+"\n",
			x(t), axisY, x(t), axisY+4, x(t), axisY+16, t)
	}
	fmt.Fprintf(&out, `<text x="%d" y="%d" text-anchor="middle">seconds from the fault to the first page</text>`+"\n",
		(axisLeft+axisRight)/2, axisY+34)
	out.WriteString("</svg>\n")
	return out.String()
}

// axisTicks picks a 1, 2 or 5 × 10ⁿ second step giving at most eight intervals, and the
// first multiple of it at or past longest as the axis' end.
func axisTicks(longest float64) (step, top float64) {
	for p := 1.0; ; p *= 10 {
		for _, k := range []float64{1, 2, 5} {
			if step = k * p; longest/step <= 8 {
				return step, math.Ceil(longest/step) * step
			}
		}
	}
}
