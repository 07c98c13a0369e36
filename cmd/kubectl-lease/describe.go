package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
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
		Long: `describe shows one lock: the record, how the exporter's code judges it now (by the API
server's clock), a coordinated election's LeaseCandidates with their freshness, the owner,
and the election history, which only an observer of every write knows: it is read from a
lease-exporter's JSON API, given with --exporter URL (after kubectl port-forward, say), or
with --exporter-service NAMESPACE/NAME[:PORT], which port-forwards to a Ready Pod behind that
Service as kubectl port-forward does (through the kubelet, so NetworkPolicy does not apply).
Without one, describe says what it cannot know. An answer about another lock (another
cluster's, or before the lock was recreated: another UID) is refused, and tenures the
exporter rebuilt from its Events are marked.

The lock is looked up as a Lease first, then as the leader annotation of a ConfigMap and an
Endpoints object; --locks narrows that.`,
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
			locksSet := cmd.Flags().Changed("locks")
			return runDescribe(cmd.Context(), o, args[0], locksSet)
		},
	}
}

// parseLockArg reads NAMESPACE/NAME, or NAME in -n's (or the context's) namespace.
func parseLockArg(arg string, o *options) (namespace, name string, err error) {
	parts := strings.Split(arg, "/")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return parts[0], parts[1], nil
	case len(parts) == 1 && parts[0] != "":
		ns, _, err := o.config.ToRawKubeConfigLoader().Namespace()
		return ns, parts[0], err
	}
	return "", "", fmt.Errorf("malformed lock %q: want NAMESPACE/NAME, or NAME with -n NAMESPACE", arg)
}

func runDescribe(ctx context.Context, o *options, arg string, locksSet bool) error {
	ns, name, err := parseLockArg(arg, o)
	if err != nil {
		return err
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
	j := judge(l, at, true)
	d := describer{w: o.streams.Out, at: at}
	d.record(&j, l, src.clock)
	if !l.Kind().Annotation() {
		d.candidates(cands)
	}
	detail, where, exporterErr := exporterDetail(ctx, o, src, l)
	d.history(detail, where, exporterErr)
	return exporterErr
}

// findLock reads ns/name as each of kinds in turn, through the informer (a Lease with its
// LeaseCandidates, judged now); the first that is a lock wins. One kind at a time: the next is
// read only if need be (an Endpoints list draws the API server's deprecation warning).
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

// describer writes describe's sections, kubectl describe's way: "Field:  value" lines.
type describer struct {
	w  io.Writer
	at time.Time
}

// labelWidth aligns every "Field:" of describe, the longest ("Preferred Holder:") and two spaces.
const labelWidth = len("Preferred Holder:") + 2

func (d *describer) field(label, value string) {
	fmt.Fprintf(d.w, "%-*s%s\n", labelWidth, label+":", esc(value))
}

func (d *describer) fields(rows [][2]string) {
	for _, r := range rows {
		d.field(r[0], r[1])
	}
}

func (d *describer) record(j *judged, l *lock.Lease, clock *serverClock) {
	state := j.Standing
	if j.skewed() {
		state += ", skewed"
	}
	problems := "<none>"
	if len(j.Problems) > 0 {
		problems = strings.Join(j.Problems, "; ")
	}
	renewed := ago(j.ObservedRenewTime, d.at)
	if j.RenewTime != nil {
		renewed += " ago (renewTime " + j.RenewTime.UTC().Format(time.RFC3339Nano) + ")"
	}
	if j.RenewTimeAheadSeconds != nil {
		renewed += fmt.Sprintf(", %.1fs ahead of the API server's clock", *j.RenewTimeAheadSeconds)
	}
	acquired := ago(j.AcquireTime, d.at)
	if j.AcquireTime != nil {
		acquired += " ago (" + j.AcquireTime.UTC().Format(time.RFC3339Nano) + ")"
	}
	expires := "<none>"
	if at, ok := l.Expiry(); ok {
		t := time.UnixMicro(at)
		expires = human(d.at.Sub(t)) // "in 5s" ahead
		if !t.After(d.at) {
			expires += " ago"
		}
		expires += " (" + t.UTC().Format(time.RFC3339Nano) + ")"
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
	d.fields(rows)
}

func (d *describer) candidates(cands []api.Candidate) {
	switch {
	case cands == nil:
		d.field("Candidates", "<not served: this API server has no LeaseCandidates (coordinated leader election is off), or you may not list them>")
		return
	case len(cands) == 0:
		d.field("Candidates", "<none>")
		return
	}
	fmt.Fprintln(d.w, "Candidates:")
	tw := tabwriter.NewWriter(d.w, 0, 8, 2, ' ', 0)
	tabRow(tw, "  ", "NAME", "BINARY", "EMULATION", "STRATEGY", "RENEWED", "FRESH", "PREFERRED")
	for _, c := range cands {
		tabRow(tw, "  ", c.Name, orNone(c.BinaryVersion), orNone(c.EmulationVersion), orNone(c.Strategy),
			ago(c.RenewTime, d.at), fmt.Sprint(c.Fresh), fmt.Sprint(c.Preferred))
	}
	tw.Flush()
}

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
	tw := tabwriter.NewWriter(d.w, 0, 8, 2, ' ', 0)
	tabRow(tw, "  ", "HOLDER", "FROM", "HELD", "ENDED", "LEADERLESS BEFORE")
	rebuilt := false
	for _, t := range detail.History.Tenures {
		holder := orNone(t.Holder)
		if t.Rebuilt {
			holder += " " + rebuiltMark
			rebuilt = true
		}
		gap := "<none>"
		if t.GapBeforeSeconds != nil {
			gap = fmt.Sprintf("%.1fs", *t.GapBeforeSeconds)
		}
		tabRow(tw, "  ", holder, fromOf(t), heldOf(t), cmp.Or(t.Ended, "holding"), gap)
	}
	tw.Flush()
	if since := detail.History.LeaderlessSince; since != nil {
		fmt.Fprintf(d.w, "  Leaderless since %s (%s ago)\n", since.UTC().Format(time.RFC3339), ago(since, d.at))
	}
	if rebuilt {
		fmt.Fprintln(d.w, "  "+rebuiltMark+": not observed by the exporter process that answered, but read back from the Events its writer wrote (docs/events.md)")
	}
}

// rebuiltMark marks a tenure the exporter read back from its Events, in the words of its
// status page.
const rebuiltMark = "(rebuilt from Events)"

// seconds formats a duration in seconds as the list's ages are.
func seconds(s float64) string { return human(time.Duration(s * float64(time.Second))) }

// fromOf and heldOf are a tenure's start and length; "<unknown>" for a tenure rebuilt from
// Events that showed it end but neither begin nor last.
func fromOf(t api.Tenure) string {
	if t.From.IsZero() {
		return "<unknown>"
	}
	return t.From.UTC().Format(time.RFC3339)
}

func heldOf(t api.Tenure) string {
	if t.HeldSeconds == nil {
		return "<unknown>"
	}
	return seconds(*t.HeldSeconds)
}
