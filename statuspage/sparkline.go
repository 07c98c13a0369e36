package statuspage

import (
	"fmt"
	"html/template"
	"slices"
	"strings"
)

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
