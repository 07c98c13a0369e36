package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
)

// table prints rows through cli-runtime's table printer, as kubectl get does: each call one
// metav1.Table over the column definitions below, every cell through esc. One tabwriter,
// which remembers its widths, serves every call, so the rows -w adds stay in the list's
// columns unless a later value does not fit. It writes each cell and its padding apart: into
// a buffer, out, flushed after each call (unbuffered, 90k rows were 4 s of system calls).
type table struct {
	out *bufio.Writer
	w   interface {
		io.Writer
		Flush() error
	} // the tabwriter over out
	printer printers.ResourcePrinter
	cols    []metav1.TableColumnDefinition
}

// seedWidths pad a cell to the width of values known before any row arrives, so a
// ConfigMap lock or a released one that -w shows later does not shift the columns.
var seedWidths = map[string]int{"Kind": len("ConfigMap"), "State": len("released"), "Renewed": len("<none>")}

func newTable(out *bufio.Writer, cols []metav1.TableColumnDefinition, wide, noHeaders bool) *table {
	return &table{out: out, w: printers.GetNewTabWriter(out), cols: cols,
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
	if err := t.w.Flush(); err != nil {
		return err
	}
	return t.out.Flush()
}

// The list's columns, whose descriptions --help prints. Priority 1 is -o wide's, as kubectl's.
var (
	namespaceColumn = metav1.TableColumnDefinition{Name: "Namespace", Type: "string", Description: "the lock's namespace (with -A)"}
	listColumns     = []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "the lock's name"},
		{Name: "Kind", Type: "string", Description: "the object the lock lives in: Lease, or the leader annotation of a ConfigMap or Endpoints (--locks)"},
		{Name: "Class", Type: "string", Description: "leader-election, node-heartbeat or apiserver-identity, as the exporter's class label"},
		{Name: "Holder", Type: "string", Description: "spec.holderIdentity; <none> when nobody holds it"},
		{Name: "State", Type: "string", Description: "on_time, lagging (held, but not renewed for over half its duration), expired or released: the standings lease_class_locks counts, judged by the exporter's code; \",skewed\" when the holder's clock is further off than the lease tolerates (LeaseHolderClockSkew)"},
		{Name: "Renewed", Type: "string", Description: "how long ago the record last changed: from renewTime by the API server's clock for a single read, as observed with -w"},
		{Name: "Duration", Type: "string", Description: "spec.leaseDurationSeconds: how long a renewal keeps the lock held"},
		{Name: "Transitions", Type: "integer", Description: "spec.leaseTransitions, the electors' count of leadership changes"},
		{Name: "Acquired", Type: "string", Priority: 1, Description: "how long ago the holder acquired it (spec.acquireTime, by the API server's clock)"},
		{Name: "Preferred Holder", Type: "string", Priority: 1, Description: "spec.preferredHolder of a coordinated election"},
		{Name: "Strategy", Type: "string", Priority: 1, Description: "spec.strategy of a coordinated election"},
		{Name: "Owner", Type: "string", Priority: 1, Description: "the owner reference, Kind/name"},
	}
	skewColumn = metav1.TableColumnDefinition{Name: "Skew", Type: "string",
		Description: "with -w: the holder's clock minus the API server's, measured on the renewals watched, as lease_holder_clock_skew_seconds; <unknown> until one was seen"}
)

// columnsFor returns the columns of a list with or without -A, and with -w.
func columnsFor(allNamespaces, watching bool) []metav1.TableColumnDefinition {
	var cols []metav1.TableColumnDefinition
	if allNamespaces {
		cols = append(cols, namespaceColumn)
	}
	cols = append(cols, listColumns[:8]...)
	if watching {
		cols = append(cols, skewColumn)
	}
	return append(cols, listColumns[8:]...)
}

// cells returns j's row, judged at at, in columnsFor's order.
func cells(j *judged, at time.Time, allNamespaces, watching bool) []any {
	var row []any
	if allNamespaces {
		row = append(row, j.Namespace)
	}
	state := j.Standing
	if j.skewed() {
		state += ",skewed"
	}
	row = append(row, j.Name, j.Kind, j.Class, orNone(j.Holder), state, ago(j.ObservedRenewTime, at),
		optional(j.LeaseDurationSeconds, "<none>", func(s int32) string { return fmt.Sprintf("%ds", s) }),
		optional(j.LeaseTransitions, "<none>", func(t int32) string { return fmt.Sprint(t) }))
	if watching {
		row = append(row, optional(j.HolderClockSkewSeconds, "<unknown>", func(s float64) string { return fmt.Sprintf("%+.2fs", s) }))
	}
	return append(row, ago(j.AcquireTime, at), orNone(j.PreferredHolder), orNone(j.Strategy), orNone(j.Owner))
}

func columnHelp() string {
	var b strings.Builder
	for _, c := range columnsFor(true, true) {
		name := strings.ToUpper(c.Name)
		if c.Priority == 1 {
			name += " (-o wide)"
		}
		fmt.Fprintf(&b, "  %-28s %s\n", name, c.Description)
	}
	return b.String()
}

// ago is how long before at t was, as human says it; <none> when t is nil.
func ago(t *time.Time, at time.Time) string {
	if t == nil {
		return "<none>"
	}
	return human(at.Sub(*t))
}

// human formats a duration as kubectl's AGE column does, with tenths below 10 s; a negative
// one is "in" that long.
func human(d time.Duration) string {
	switch {
	case d < 0:
		return "in " + duration.HumanDuration(-d)
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return duration.HumanDuration(d)
}

// optional formats *v, or says missing when v is nil.
func optional[T any](v *T, missing string, format func(T) string) string {
	if v == nil {
		return missing
	}
	return format(*v)
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
