// Command detect measures what the alerts catch: a matrix of faults on real electors
// (client-go, controller-runtime, kube-scheduler, kube-controller-manager, the Python
// client's Lease and ConfigMap electors) on a local control plane, with three alerting rule
// sets side by side in one real Prometheus routed to one real Alertmanager: this
// repository's mixin as shipped, the participants' self-report rules leader-election guides
// ship, and the staleness rule users write on kube-state-metrics. For every fault and set
// it records whether it paged, how long after the fault, how long after the repair it
// resolved, and every page that should not have come. docs/detection.md explains the
// method and shows the results.
//
//	make bench-alerts                        # the whole matrix (about 40 minutes), into docs/detection.json, .md and .svg
//	go run ./hack/detect -smoke              # one fault with short `for`s: checks the harness (make test)
//	go run ./hack/detect -render             # regenerate docs/detection.md's table and the chart from the JSON
//	go run ./hack/detect -only flapping,...  # some faults only, into -out
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	// The electors' client-go logs every failed renewal; only errors reach the output.
	klog.SetSlogLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, logger); err != nil {
		logger.Error("detect failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, logger *slog.Logger) error {
	smoke := flag.Bool("smoke", false, "Run one fault with the rules' `for` shortened to 10 s, check that ours paged, did not page falsely and that every page is explained, and write nothing into docs/.")
	out := flag.String("out", "docs/detection.json", "The results file (not written with -smoke).")
	doc := flag.String("doc", "docs/detection.md", "The document whose generated table -render (and a full run) rewrites.")
	svg := flag.String("svg", "docs/detection.svg", "The chart -render (and a full run) writes.")
	renderOnly := flag.Bool("render", false, "Only regenerate -doc's table and -svg from -out.")
	rescoreOnly := flag.Bool("rescore", false, "Only sort the recorded pages of -out's must-not-page rows into false and other again with the current scoring, write -out and regenerate -doc's table and -svg.")
	only := flag.String("only", "", "Comma-separated fault IDs to run instead of all (debugging; the output is partial).")
	keep := flag.Bool("keep", false, "Keep the working directory (logs of every process) after the run.")
	short := flag.Bool("short", false, "With -only: -smoke's short `for`s and windows, to check faults' mechanics in minutes; the times mean nothing.")
	flag.Parse()
	if *short && *only == "" {
		return errors.New("-short needs -only: a whole matrix at short windows measures nothing")
	}
	*short = *short || *smoke
	if *renderOnly {
		return render(*out, *doc, *svg)
	}
	if *rescoreOnly {
		r, err := readResults(*out)
		if err != nil {
			return err
		}
		rescore(r, describe())
		if err := writeResults(*out, r); err != nil {
			return err
		}
		return render(*out, *doc, *svg)
	}
	defs, err := selectFaults(*smoke, *only)
	if err != nil {
		return err
	}
	if err := checkTools(*smoke); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "lease-exporter-detect-")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	logger.Info("working directory", "dir", dir)

	began := time.Now()
	settings, w := Settings{ScrapeIntervalSeconds: 15, EvaluationIntervalSeconds: 15, GroupWaitSeconds: 1},
		windows{settle: 45 * time.Second, hold: 270 * time.Second, resolve: 3 * time.Minute, quiet: 6 * time.Minute}
	if *short {
		settings.ScrapeIntervalSeconds, settings.EvaluationIntervalSeconds = 5, 5
		w = windows{settle: 20 * time.Second, hold: 100 * time.Second, resolve: time.Minute, quiet: time.Minute}
	}
	var expect []string
	if slices.ContainsFunc(defs, func(d faultDef) bool { return d.id == "expected-lock-deleted" }) {
		expect = append(expect, "detect-expected-lock-deleted/"+expectedLease)
	}
	e, err := start(ctx, dir, settings, expect, *short, needsManager(defs))
	if err != nil {
		return err
	}
	defer e.stop()
	version, err := e.suite.Client.Discovery().ServerVersion()
	if err != nil {
		return err
	}
	r := &Results{Commit: describe(), Kubernetes: version.GitVersion, Settings: settings, Sets: ruleSets, Started: time.Now()}
	trials, failed := runFaults(ctx, logger, e, defs, w)
	for _, t := range trials {
		t.close()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, t := range trials {
		r.Faults = append(r.Faults, *t.f)
	}
	faults := make([]*Fault, len(r.Faults))
	for i := range r.Faults {
		faults[i] = &r.Faults[i]
	}
	spans := make([]span, len(trials))
	for i, t := range trials {
		spans[i] = span{from: t.started, to: t.f.EndAt}
	}
	r.Unattributed = score(faults, spans, e.recv.all(), settings.grace())
	r.Seconds = time.Since(began).Seconds()
	logger.Info("done", "seconds", int(r.Seconds))
	if *smoke {
		return checkSmoke(r, failed)
	}
	if *short {
		fmt.Println(renderTable(r))
		for _, n := range r.Unattributed {
			fmt.Printf("unattributed page at %s: %v\n", n.At.Format(time.TimeOnly), n.Labels)
		}
		return errors.Join(failed...)
	}
	if err := writeResults(*out, r); err != nil {
		return err
	}
	if *only == "" {
		if err := render(*out, *doc, *svg); err != nil {
			return err
		}
	}
	return errors.Join(failed...)
}

// selectFaults is the catalogue, or its first fault for -smoke, or the -only ones.
func selectFaults(smoke bool, only string) ([]faultDef, error) {
	all := catalogue()
	if smoke {
		return all[:1], nil
	}
	if only == "" {
		return all, nil
	}
	var defs []faultDef
	for _, id := range strings.Split(only, ",") {
		i := slices.IndexFunc(all, func(d faultDef) bool { return d.id == id })
		if i < 0 {
			var ids []string
			for _, d := range all {
				ids = append(ids, d.id)
			}
			return nil, fmt.Errorf("-only: no fault %q; the faults are %s", id, strings.Join(ids, ", "))
		}
		defs = append(defs, all[i])
	}
	return defs, nil
}

// runFaults runs the shared-nothing faults at once, then the exclusive ones one by one. A
// fault that failed for another reason than its precondition is in failed.
func runFaults(ctx context.Context, logger *slog.Logger, e *environment, defs []faultDef, w windows) ([]*trial, []error) {
	trials := make([]*trial, len(defs))
	errs := make([]error, len(defs))
	one := func(i int) {
		d := defs[i]
		ns := "detect-" + d.id
		if d.id == "node-heartbeat-stops" {
			ns = "kube-node-lease"
		}
		t := &trial{e: e, ns: ns, windows: w, logger: logger, f: &Fault{ID: d.id, Title: d.title, Elector: d.elector, MustPage: d.mustPage,
			Namespace: ns, Exclusive: d.exclusive, LeaseDurationSeconds: d.lease.Seconds(), Ran: true}, started: time.Now()}
		trials[i] = t
		logger.Info("fault starts", "fault", d.id)
		err := t.namespace(ctx)
		if err == nil {
			err = d.run(ctx, t)
		}
		t.f.EndAt = time.Now()
		var nr errNotRun
		switch {
		case errors.As(err, &nr):
			t.f.Ran, t.f.NotRun = false, nr.Error()
			logger.Warn("fault not run", "fault", d.id, "reason", nr.Error())
		case err != nil:
			t.f.Ran, t.f.NotRun = false, "failed: "+err.Error()
			errs[i] = fmt.Errorf("fault %s: %w", d.id, err)
			logger.Error("fault failed", "fault", d.id, "err", err)
		default:
			logger.Info("fault done", "fault", d.id)
		}
	}
	var wg sync.WaitGroup
	for i, d := range defs {
		if !d.exclusive {
			wg.Go(func() { one(i) })
		}
	}
	wg.Wait()
	for i, d := range defs {
		if d.exclusive && ctx.Err() == nil {
			one(i)
		}
	}
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	// Exclusive faults are skipped once ctx has ended.
	return slices.DeleteFunc(trials, func(t *trial) bool { return t == nil }), failed
}

// checkSmoke is -smoke's verdict: the fault ran, our set paged and did not page falsely, and
// no page went unexplained.
func checkSmoke(r *Results, failed []error) error {
	if err := errors.Join(failed...); err != nil {
		return err
	}
	f := r.Faults[0]
	if !f.Ran {
		return fmt.Errorf("smoke: %s was not run: %s", f.ID, f.NotRun)
	}
	ours := f.Results["lease-exporter"]
	var problems []string
	if !ours.Paged {
		problems = append(problems, fmt.Sprintf("%s did not page with the lease-exporter rules", f.ID))
	}
	// Only ours must not page falsely: a baseline's false page (the self-report's `sum == 0`
	// while the replacement waits to lead, with the smoke's 10 s `for`) is what it measures,
	// and is printed below.
	if n := len(ours.False); n > 0 {
		problems = append(problems, fmt.Sprintf("%d false page(s) from lease-exporter: %v", n, ours.False))
	}
	if len(r.Unattributed) > 0 {
		problems = append(problems, fmt.Sprintf("%d page(s) no fault explains: %v", len(r.Unattributed), r.Unattributed))
	}
	if len(problems) > 0 {
		return errors.New("smoke: " + strings.Join(problems, "; "))
	}
	for _, s := range r.Sets {
		o := f.Results[s.ID]
		if o.Paged {
			fmt.Printf("smoke: %s: %s paged with %v after %.0f s, resolved %s s after the repair\n", s.ID, f.ID, o.Alerts, *o.PageSeconds, ptrString(o.ResolveSeconds))
		} else {
			fmt.Printf("smoke: %s: %s did not page\n", s.ID, f.ID)
		}
		if len(o.False) > 0 {
			fmt.Printf("smoke: %s: %d false page(s) on %s: %v\n", s.ID, len(o.False), f.ID, o.False)
		}
	}
	return nil
}

func ptrString(f *float64) string {
	if f == nil {
		return "never"
	}
	return fmt.Sprintf("%.0f", *f)
}

// describe names the tree measured, as docs/benchmarks.md does.
func describe() string {
	b, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// needsManager reports whether a fault runs a controller-runtime manager, whose build is minutes cold.
func needsManager(defs []faultDef) bool {
	return slices.ContainsFunc(defs, func(d faultDef) bool { return d.elector == "controller-runtime" })
}
