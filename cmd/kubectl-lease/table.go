package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// table prints rows as kubectl get does (upper-case headers, columns three spaces apart,
// -o wide's columns only when asked), with every control character in a cell written out
// (esc), and keeps its column widths from one call to the next, growing a column only when
// a wider value arrives: the pages of a long list and the rows -w adds stay in the first
// page's columns unless a later value does not fit.
type table struct {
	w         io.Writer
	cols      []metav1.TableColumnDefinition
	wide      bool
	noHeaders bool
	widths    []int
	headed    bool
}

// columnPadding and minColumnWidth are kubectl's tabwriter's (printers.GetNewTabWriter).
const (
	columnPadding  = 3
	minColumnWidth = 6
)

// seedWidths are the widths of values known before any row arrives ("ConfigMap", "released"),
// so a ConfigMap lock on a later page does not shift its columns.
var seedWidths = map[string]int{"Kind": len("ConfigMap"), "State": len("released"), "Renewed": len("<none>")}

func newTable(w io.Writer, cols []metav1.TableColumnDefinition, wide, noHeaders bool) *table {
	t := &table{w: w, cols: cols, wide: wide, noHeaders: noHeaders, widths: make([]int, len(cols))}
	for j, c := range cols {
		t.widths[j] = max(seedWidths[c.Name]+columnPadding, minColumnWidth)
	}
	return t
}

// print writes rows (cells in cols' order), the header first if none was written yet.
func (t *table) print(rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	cells := make([][]string, len(rows))
	for i, r := range rows {
		for j := range t.cols {
			s := ""
			if j < len(r) {
				s = esc(fmt.Sprint(r[j]))
			}
			cells[i] = append(cells[i], s)
		}
	}
	var header []string
	if !t.headed && !t.noHeaders {
		for _, c := range t.cols {
			header = append(header, strings.ToUpper(c.Name))
		}
		t.grow(header)
	}
	for _, r := range cells {
		t.grow(r)
	}
	var b strings.Builder
	if header != nil {
		t.line(&b, header)
	}
	t.headed = true
	for _, r := range cells {
		t.line(&b, r)
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

func (t *table) shown(j int) bool { return t.wide || t.cols[j].Priority == 0 }

func (t *table) grow(cells []string) {
	for j, s := range cells {
		t.widths[j] = max(t.widths[j], utf8.RuneCountInString(s)+columnPadding, minColumnWidth)
	}
}

func (t *table) line(b *strings.Builder, cells []string) {
	last := -1
	for j := range cells {
		if t.shown(j) {
			last = j
		}
	}
	for j, s := range cells {
		if !t.shown(j) {
			continue
		}
		b.WriteString(s)
		if j != last {
			b.WriteString(strings.Repeat(" ", max(t.widths[j]-utf8.RuneCountInString(s), 1)))
		}
	}
	b.WriteByte('\n')
}

// esc writes out every character of s that can change how a terminal shows the text
// around it, as \xNN or \uNNNN: controls (C0, DEL and C1: a newline, a backspace, an
// escape or a CSI), the bidirectional controls (an override can make "ab" read "ba", or
// move a column), and the line and paragraph separators some terminals and editors break
// lines at. Nothing a cluster object or an exporter's answer holds (a holder identity is any
// string) can then add a row, move the cursor or reorder what a line says.
func esc(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !unsafeRune(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// unsafeRune reports whether esc writes r out: a control, a bidirectional control (ALM
// U+061C, LRM and RLM U+200E-U+200F, the embeddings and overrides U+202A-U+202E, the
// isolates U+2066-U+2069) or a line or paragraph separator (U+2028, U+2029).
func unsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u061c', r == '\u200e', r == '\u200f',
		r >= '\u2028' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// tabRow writes cells to a tabwriter as one row, each cell through esc: a table that is
// not a table (describe's candidates and history) escapes every field as the list does.
func tabRow(w io.Writer, indent string, cells ...string) {
	for i, c := range cells {
		cells[i] = esc(c)
	}
	fmt.Fprintln(w, indent+strings.Join(cells, "\t"))
}
