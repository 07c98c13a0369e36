package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
)

// table prints rows through cli-runtime's table printer, as kubectl get does (upper-case
// headers, columns three spaces apart, -o wide's columns only when asked): each call one
// metav1.Table over the column definitions (columns.go), every cell through esc. One
// tabwriter, which remembers its widths, serves every call, so the rows -w adds stay in the
// list's columns unless a later value does not fit.
type table struct {
	w       flushWriter
	printer printers.ResourcePrinter
	cols    []metav1.TableColumnDefinition
}

type flushWriter interface {
	io.Writer
	Flush() error
}

// seedWidths are the widths of values known before any row arrives ("ConfigMap",
// "released"): a cell is padded to them, so a ConfigMap lock -w shows later does not shift
// its columns.
var seedWidths = map[string]int{"Kind": len("ConfigMap"), "State": len("released"), "Renewed": len("<none>")}

func newTable(w io.Writer, cols []metav1.TableColumnDefinition, wide, noHeaders bool) *table {
	return &table{w: printers.GetNewTabWriter(w), cols: cols,
		printer: printers.NewTablePrinter(printers.PrintOptions{Wide: wide, NoHeaders: noHeaders})}
}

// print writes rows (cells in cols' order), the header first if none was written yet.
func (t *table) print(rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	tbl := &metav1.Table{ColumnDefinitions: t.cols}
	for _, r := range rows {
		cells := make([]any, len(r))
		for j, c := range r {
			s := esc(fmt.Sprint(c))
			cells[j] = s + strings.Repeat(" ", max(seedWidths[t.cols[j].Name]-utf8.RuneCountInString(s), 0))
		}
		tbl.Rows = append(tbl.Rows, metav1.TableRow{Cells: cells})
	}
	if err := t.printer.PrintObj(tbl, t.w); err != nil {
		return err
	}
	return t.w.Flush()
}

// tabRow writes cells to a tabwriter as one row, each cell through esc: a table that is
// not a table (describe's candidates and history) escapes every field as the list does.
func tabRow(w io.Writer, indent string, cells ...string) {
	for i, c := range cells {
		cells[i] = esc(c)
	}
	fmt.Fprintln(w, indent+strings.Join(cells, "\t"))
}
