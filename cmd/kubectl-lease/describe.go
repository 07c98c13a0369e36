package main

import (
	"context"
	"fmt"
	"strings"

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
