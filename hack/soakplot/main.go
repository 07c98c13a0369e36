// Command soakplot draws the soak test's per-minute samples (soak.csv, written by
// test/node's TestSoak10kLeasesOnChartDefaults among its artifacts: go test -artifacts) as a small
// SVG for docs/reliability.md: memory (RSS, heap goal, working set) in MiB on top, goroutines and
// open files below, one line per Pod and figure.
//
//	go run ./hack/soakplot soak.csv docs/soak.svg
package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: soakplot soak.csv out.svg")
		os.Exit(2)
	}
	in, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer in.Close()
	svg, err := plot(in)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], []byte(svg), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// series is one line: a Pod's figure by minute.
type series struct {
	name   string
	minute []float64
	value  []float64
}

// panel is a chart of series sharing one y axis.
type panel struct {
	title   string
	columns []string // CSV columns drawn
	scale   float64  // divides the values (bytes to MiB)
}

var panels = []panel{
	{"memory (MiB)", []string{"rss_bytes", "heap_goal_bytes", "working_set_bytes"}, 1 << 20},
	{"goroutines, open files", []string{"goroutines", "open_fds"}, 1},
}

const width, panelHeight, margin = 640, 200, 40

var colours = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"}

func plot(r io.Reader) (string, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return "", err
	}
	if len(rows) < 2 {
		return "", fmt.Errorf("no samples")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, need := range []string{"pod", "minute"} {
		if _, ok := col[need]; !ok {
			return "", fmt.Errorf("no %q column in the header %v", need, rows[0])
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n",
		width, len(panels)*(panelHeight+margin)+margin)
	for p, pn := range panels {
		var all []series
		for _, c := range pn.columns {
			i, ok := col[c]
			if !ok {
				return "", fmt.Errorf("no %q column in the header %v", c, rows[0])
			}
			byPod := map[string]*series{}
			var pods []string
			for _, row := range rows[1:] {
				m, err1 := strconv.ParseFloat(row[col["minute"]], 64)
				v, err2 := strconv.ParseFloat(row[i], 64)
				if err1 != nil || err2 != nil {
					return "", fmt.Errorf("row %v: not numbers", row)
				}
				pod := row[col["pod"]]
				s := byPod[pod]
				if s == nil {
					s = &series{name: shortPod(pod) + " " + c}
					byPod[pod] = s
					pods = append(pods, pod)
				}
				s.minute, s.value = append(s.minute, m), append(s.value, v/pn.scale)
			}
			for _, pod := range pods {
				all = append(all, *byPod[pod])
			}
		}
		drawPanel(&b, pn.title, all, margin+p*(panelHeight+margin))
	}
	b.WriteString("</svg>\n")
	return b.String(), nil
}

// shortPod keeps a Pod name's last segment, which tells the replicas apart.
func shortPod(name string) string { return name[strings.LastIndexByte(name, '-')+1:] }

func drawPanel(b *strings.Builder, title string, all []series, top int) {
	maxX, maxY := 1.0, 1.0
	for _, s := range all {
		maxX = max(maxX, slices.Max(s.minute))
		maxY = max(maxY, slices.Max(s.value))
	}
	maxY *= 1.1
	left, plotW := 50, width-50-180
	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, top-8, title)
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, top, plotW, panelHeight)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%.0f</text><text x="%d" y="%d" text-anchor="end">0</text>`+"\n",
		left-4, top+10, maxY, left-4, top+panelHeight)
	fmt.Fprintf(b, `<text x="%d" y="%d">0</text><text x="%d" y="%d" text-anchor="end">%.0f min</text>`+"\n",
		left, top+panelHeight+14, left+plotW, top+panelHeight+14, maxX)
	for i, s := range all {
		pts := make([]string, len(s.minute))
		for j := range s.minute {
			x := float64(left) + s.minute[j]/maxX*float64(plotW)
			y := float64(top+panelHeight) - s.value[j]/maxY*panelHeight
			pts[j] = fmt.Sprintf("%.1f,%.1f", x, y)
		}
		colour := colours[i%len(colours)]
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", colour, strings.Join(pts, " "))
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="%s">%s</text>`+"\n", left+plotW+8, top+12+14*i, colour, s.name)
	}
}
