package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// runList lists every lock of the kinds --locks names, read by the exporter's informer
// (read.go) and judged at one moment by the API server's clock; -w goes on (watch.go).
func runList(ctx context.Context, o *options) error {
	src, err := o.connect(o) // first: a bad --context or --kubeconfig is said as kubectl says it
	if err != nil {
		return err
	}
	kinds, err := o.kinds()
	if err != nil {
		return err
	}
	ns, err := o.namespace()
	if err != nil {
		return err
	}
	out := newListOutput(o, src.clock)
	r := readOptions{kinds: kinds, ns: ns, selector: o.selector}
	var w *watchOutput
	if o.watch {
		w = &watchOutput{out: out}
		r.observer = w
	}
	c, stop, failed, err := src.read(ctx, r)
	if err != nil {
		return err
	}
	defer stop()
	if w != nil {
		// The list's rows first; the observer prints changes only after them.
		if err := w.begin(func() error { return out.print(records(c, kinds), ns) }); err != nil {
			return err
		}
		return watchLocks(ctx, c, w, failed)
	}
	recs := records(c, kinds)
	stop() // nothing changes the records while they are printed
	return out.print(recs, ns)
}

// listOutput prints the locks as -o asks.
type listOutput struct {
	o     *options
	clock *serverClock
	out   *bufio.Writer // stdout, flushed after each print
	// filter is --class; summed is the class summed up instead of listed (node heartbeats,
	// unless --class asks for them or -o name lists every lock).
	filter, summed *lock.Class
	nodes          nodeSummary
	// shown is what each row printed said, so -w prints a lock again only when that changes.
	shown map[lock.Ref]shownState
	table *table
}

func newListOutput(o *options, clock *serverClock) *listOutput {
	out := &listOutput{o: o, clock: clock, out: bufio.NewWriterSize(o.streams.Out, 64<<10)}
	if c, err := lock.ParseClass(o.class); o.class != "" && err == nil {
		out.filter = &c
	} else if o.output != "name" {
		out.summed = ptr.To(lock.ClassNodeHeartbeat)
	}
	if o.watch {
		out.shown = map[lock.Ref]shownState{}
	}
	out.table = newTable(out.out, columnsFor(o.allNamespaces, o.watch), o.output == "wide", o.noHeaders)
	return out
}

// print prints the records observed in namespace ns ("" for all), judged at one moment, as
// -o asks: names, the table, or a document.
func (p *listOutput) print(recs []*lock.Lease, ns string) error {
	at, _, _ := p.clock.now()
	var listed []*lock.Lease
	for _, rec := range recs {
		if p.listed(rec) {
			listed = append(listed, rec)
		} else if p.summed != nil && rec.Class == *p.summed {
			p.nodes.add(rec, at)
		}
	}
	var err error
	switch p.o.output {
	case "name":
		for _, rec := range listed {
			gvr, kind := rec.Kind().GVR(), strings.ToLower(rec.Kind().String())
			if gvr.Group != "" {
				kind += "." + gvr.Group
			}
			fmt.Fprintln(p.out, esc(kind+"/"+rec.Name())) // as kubectl's -o name: lease.coordination.k8s.io/NAME
		}
	case "", "wide":
		err = p.printTable(listed, at, ns)
	default:
		err = p.structured(listed)
	}
	return cmp.Or(err, p.out.Flush())
}

// printTable prints the table and, for a person reading it (not --no-headers, nor -w
// between its rows), the node-heartbeat summary and which clock judged.
func (p *listOutput) printTable(recs []*lock.Lease, at time.Time, ns string) error {
	var rows [][]any
	for _, rec := range recs {
		j := judge(rec, at, !p.o.watch)
		if p.o.watch {
			p.shown[rec.Ref()] = stateOf(j, rec)
		}
		rows = append(rows, cells(&j, at, p.o.allNamespaces, p.o.watch))
	}
	if err := p.table.print(rows); err != nil || p.o.watch {
		return err
	}
	if p.nodes.Total() > 0 && !p.o.noHeaders {
		if err := p.nodes.print(p.out, at); err != nil {
			return err
		}
	}
	if err := p.out.Flush(); err != nil { // before the note on stderr
		return err
	}
	switch {
	case len(rows) == 0 && p.nodes.Total() == 0 && ns == "":
		fmt.Fprintln(p.o.streams.ErrOut, "No resources found")
	case len(rows) == 0 && p.nodes.Total() == 0:
		fmt.Fprintf(p.o.streams.ErrOut, "No resources found in %s namespace.\n", esc(ns))
	case !p.o.noHeaders:
		fmt.Fprintf(p.o.streams.ErrOut, "(judged %s; a single read cannot measure a holder's clock skew, -w does)\n", p.clock.describe())
	}
	return nil
}

// listJSON is the document -o json, yaml, the templates and custom columns print: the locks
// as the exporter's JSON list carries them, in its order (namespace, name, kind), judged at
// one moment by the API server's clock.
type listJSON struct {
	EvaluatedAt time.Time `json:"evaluated_at"`
	// Clock is "api-server" (the Date header of the list's responses) or "local".
	Clock                   string   `json:"clock"`
	ClockUncertaintySeconds float64  `json:"clock_uncertainty_seconds"`
	Leases                  []judged `json:"leases"`
	// NodeHeartbeats sums up the node heartbeats when they are not listed; null otherwise.
	NodeHeartbeats *api.NodeHeartbeats `json:"node_heartbeats"`
}

// structured prints recs' document through the printer -o names.
func (p *listOutput) structured(recs []*lock.Lease) error {
	at, unc, server := p.clock.now()
	out := listJSON{EvaluatedAt: at.UTC(), Clock: "local", ClockUncertaintySeconds: unc.Seconds(), Leases: []judged{}}
	if server {
		out.Clock = "api-server"
	}
	slices.SortFunc(recs, func(a, b *lock.Lease) int {
		return cmp.Or(strings.Compare(a.Namespace(), b.Namespace()), strings.Compare(a.Name(), b.Name()), strings.Compare(a.Kind().String(), b.Kind().String()))
	})
	for _, rec := range recs {
		out.Leases = append(out.Leases, judge(rec, at, true))
	}
	if p.nodes.Total() > 0 {
		out.NodeHeartbeats = api.SummaryJSON(&p.nodes.Summary)
	}
	b, err := json.Marshal(out)
	if err == nil && p.o.output != "json" && !strings.HasSuffix(p.o.output, "yaml") {
		b, err = escValues(b) // a template or a custom column prints values bare: escape them as the table does
	}
	printer, perr := p.o.printer()
	if err = cmp.Or(err, perr); err != nil {
		return err
	}
	// runtime.Unknown: the printers write its JSON as it is (indented, or as YAML), with no
	// apiVersion or kind added: the document is the exporter's JSON, not an API object.
	return printer.PrintObj(&runtime.Unknown{Raw: escJSON(b), ContentType: runtime.ContentTypeJSON}, p.out)
}
