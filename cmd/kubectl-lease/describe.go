package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

func newDescribeCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAMESPACE/NAME",
		Short: "One lock: its record, judgement, candidates and owner, and its history from an exporter",
		Long: `describe shows one lock: its record, how the exporter's code judges it now (by the API
server's clock), a coordinated election's LeaseCandidates, and its election history, which only
an observer of every write knows: read from a lease-exporter's JSON API at --exporter URL, or
through a port-forward to a Ready Pod behind --exporter-service NAMESPACE/NAME[:PORT] (through
the kubelet, so NetworkPolicy does not apply). Without one, describe says what it cannot know.
An answer about another lock (another cluster's, or another UID) is refused; tenures the
exporter rebuilt from its Events are marked. The lock is looked up as a Lease, then as the
leader annotation of a ConfigMap and an Endpoints object; --locks narrows that.`,
		Example: `  kubectl port-forward -n monitoring svc/lease-exporter 10047:http-metrics &
  kubectl lease describe kube-system/kube-scheduler --exporter http://127.0.0.1:10047
  kubectl lease describe kube-system/kube-scheduler --exporter-service monitoring/lease-exporter
  kubectl lease describe my-operator-lock -n operators --locks configmaps`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("describe takes one lock, NAMESPACE/NAME (or NAME with -n); got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return runDescribe(cmd.Context(), o, args[0], cmd.Flags().Changed("locks"))
		},
	}
}

func runDescribe(ctx context.Context, o *options, arg string, locksSet bool) error {
	parts := strings.Split(arg, "/")
	if len(parts) > 2 || slices.Contains(parts, "") {
		return fmt.Errorf("malformed lock %q: want NAMESPACE/NAME, or NAME with -n NAMESPACE", arg)
	}
	ns, name := parts[0], parts[len(parts)-1]
	if len(parts) == 1 {
		var err error
		if ns, _, err = o.config.ToRawKubeConfigLoader().Namespace(); err != nil {
			return err
		}
	}
	kinds := lock.Kinds
	if locksSet {
		kinds, _ = o.kinds()
	}
	src, err := o.connect(o)
	if err != nil {
		return err
	}
	l, cands, err := findLock(ctx, src, kinds, ns, name)
	if err != nil {
		return err
	}
	at, _, _ := src.clock.now()
	d := describer{w: o.streams.Out, at: at}
	d.record(judge(l, at, true), l, src.clock)
	if !l.Kind().Annotation() {
		d.candidates(cands)
	}
	detail, where, err := exporterDetail(ctx, o, src, l)
	d.history(detail, where, err)
	return err
}

// findLock reads ns/name as each of kinds in turn (a Lease with its LeaseCandidates); the
// first that is a lock wins. The next kind is read only if need be: an Endpoints list draws
// the API server's deprecation warning.
func findLock(ctx context.Context, src *source, kinds []lock.Kind, ns, name string) (*lock.Lease, []api.Candidate, error) {
	var tried []string
	for _, k := range kinds {
		c, stop, _, err := src.read(ctx, readOptions{kinds: []lock.Kind{k}, ns: ns, candidates: !k.Annotation()})
		if err != nil {
			return nil, nil, err
		}
		l := c.Lookup(k, ns, name)
		var cands []api.Candidate
		if l != nil {
			at, _, _ := src.clock.now()
			cands = api.Candidates(c, ns, name, l.PreferredHolder(), at)
		}
		stop()
		if l != nil {
			return l, cands, nil
		}
		tried = append(tried, "no "+k.String())
	}
	return nil, nil, fmt.Errorf("no lock %s/%s: found %s with the leader annotation (%s is the annotation of ConfigMap and Endpoints locks); check the name, or list them: kubectl lease -n %s --locks %s",
		ns, name, strings.Join(tried, ", "), leaderrecord.Annotation, ns, lock.KindNames("and"))
}

// describer writes describe's sections as kubectl describe does: "Field:  value" lines, and
// tables indented under a field.
type describer struct {
	w  io.Writer
	at time.Time
}

func (d *describer) field(label, value string) {
	fmt.Fprintf(d.w, "%-*s%s\n", len("Preferred Holder:  "), label+":", esc(value))
}

// table writes a header and rows under a field, indented, every cell through esc.
func (d *describer) table(header string, rows [][]string) {
	tw := tabwriter.NewWriter(d.w, 0, 8, 2, ' ', 0)
	for _, r := range append([][]string{strings.Split(header, ",")}, rows...) {
		for i, c := range r {
			r[i] = esc(c)
		}
		fmt.Fprintln(tw, "  "+strings.Join(r, "\t"))
	}
	tw.Flush()
}

// when is t as an age with its timestamp: "5m ago (2026-11-28T02:55:00Z)", or "in 13s (...)".
func (d *describer) when(t time.Time) string {
	s := human(d.at.Sub(t))
	if !t.After(d.at) {
		s += " ago"
	}
	return s + " (" + t.UTC().Format(time.RFC3339Nano) + ")"
}

func (d *describer) record(j judged, l *lock.Lease, clock *serverClock) {
	state, problems := j.Standing, "<none>"
	if j.skewed() {
		state += ", skewed"
	}
	if len(j.Problems) > 0 {
		problems = strings.Join(j.Problems, "; ")
	}
	renewed, acquired, expires := ago(j.ObservedRenewTime, d.at), "<none>", "<none>"
	if j.RenewTime != nil {
		renewed += " ago (renewTime " + j.RenewTime.UTC().Format(time.RFC3339Nano) + ")"
	}
	if j.RenewTimeAheadSeconds != nil {
		renewed += fmt.Sprintf(", %.1fs ahead of the API server's clock", *j.RenewTimeAheadSeconds)
	}
	if j.AcquireTime != nil {
		acquired = d.when(*j.AcquireTime)
	}
	if at, ok := l.Expiry(); ok {
		expires = d.when(time.UnixMicro(at))
	}
	rows := [][2]string{
		{"Name", j.Name}, {"Namespace", j.Namespace}, {"Kind", j.Kind}, {"Class", j.Class},
		{"Holder", orNone(j.Holder)}, {"State", state}, {"Problems", problems},
		{"Renewed", renewed}, {"Acquired", acquired}, {"Expires", expires},
		{"Duration", optional(j.LeaseDurationSeconds, "<none>", func(s int32) string { return fmt.Sprintf("%ds", s) })},
		{"Transitions", optional(j.LeaseTransitions, "<none>", func(t int32) string { return fmt.Sprint(t) })},
		{"Owner", orNone(j.Owner)}, {"Strategy", orNone(j.Strategy)}, {"Preferred Holder", orNone(j.PreferredHolder)},
	}
	if p := l.RecordProblems(); len(p) > 0 {
		rows = append(rows, [2]string{"Unreadable", lock.DescribeProblems(p)})
	}
	rows = append(rows, [2]string{"Judged", clock.describe() + "; a single read cannot measure the holder's clock skew (kubectl lease -w does)"})
	for _, r := range rows {
		d.field(r[0], r[1])
	}
}

func (d *describer) candidates(cands []api.Candidate) {
	switch {
	case cands == nil:
		d.field("Candidates", "<not served: this API server has no LeaseCandidates (coordinated leader election is off), or you may not list them>")
	case len(cands) == 0:
		d.field("Candidates", "<none>")
	default:
		fmt.Fprintln(d.w, "Candidates:")
		var rows [][]string
		for _, c := range cands {
			rows = append(rows, []string{c.Name, orNone(c.BinaryVersion), orNone(c.EmulationVersion), orNone(c.Strategy),
				ago(c.RenewTime, d.at), fmt.Sprint(c.Fresh), fmt.Sprint(c.Preferred)})
		}
		d.table("NAME,BINARY,EMULATION,STRATEGY,RENEWED,FRESH,PREFERRED", rows)
	}
}

// rebuiltMark marks a tenure the exporter read back from its Events, in its status page's words.
const rebuiltMark = "(rebuilt from Events)"

func (d *describer) history(detail *api.Detail, where string, err error) {
	switch {
	case err != nil:
		d.field("History", "<unknown: "+err.Error()+">")
		return
	case detail == nil:
		d.field("History", "<unknown without an exporter: only an observer of every write knows past holders and the time without one; give --exporter URL or --exporter-service NAMESPACE/NAME>")
		return
	case detail.History == nil:
		d.field("History", fmt.Sprintf("<none: %s keeps no history for the %s class (--history.classes)>", where, detail.Class))
		return
	}
	fmt.Fprintf(d.w, "History (from %s, as of %s):\n", esc(where), d.at.UTC().Format(time.RFC3339))
	var rows [][]string
	rebuilt := false
	for _, t := range detail.History.Tenures {
		// A tenure rebuilt from Events that showed it end, but neither begin nor last, has
		// neither start nor length.
		holder, from, held, gap := orNone(t.Holder), "<unknown>", "<unknown>", "<none>"
		if t.Rebuilt {
			holder, rebuilt = holder+" "+rebuiltMark, true
		}
		if !t.From.IsZero() {
			from = t.From.UTC().Format(time.RFC3339)
		}
		if t.HeldSeconds != nil {
			held = human(time.Duration(*t.HeldSeconds * float64(time.Second)))
		}
		if t.GapBeforeSeconds != nil {
			gap = fmt.Sprintf("%.1fs", *t.GapBeforeSeconds)
		}
		rows = append(rows, []string{holder, from, held, cmp.Or(t.Ended, "holding"), gap})
	}
	d.table("HOLDER,FROM,HELD,ENDED,LEADERLESS BEFORE", rows)
	if since := detail.History.LeaderlessSince; since != nil {
		fmt.Fprintf(d.w, "  Leaderless since %s (%s ago)\n", since.UTC().Format(time.RFC3339), ago(since, d.at))
	}
	if rebuilt {
		fmt.Fprintln(d.w, "  "+rebuiltMark+": not observed by the exporter process that answered, but read back from the Events its writer wrote (docs/events.md)")
	}
}
