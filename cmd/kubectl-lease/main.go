// Command kubectl-lease is the exporter's judgement at the command line, for the person on
// call: `kubectl lease` lists every election lock with who holds it and whether validly, as
// lease_held and lease_class_locks judge it (the same code, lock), and `kubectl
// lease describe` shows one lock's record, candidates and, from an exporter, its history.
// docs/kubectl-plugin.md is its manual.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
)

func main() {
	// client-go's reflector (the informer's) logs a watch it reopens through klog: the plugin
	// retries as the exporter does, and a person reading -w's rows needs no log lines between them.
	klog.SetLogger(logr.Discard())
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(run(context.Background(), os.Args[1:], streams))
}

// run runs the command line args and returns the exit code: 0, or 1 after one line
// "error: ..." on stderr, as kubectl's own commands end (never a stack trace). Interrupted
// (Ctrl-C, which is how -w ends), it exits 130 as a shell reports SIGINT, and says nothing:
// the requests it cut short did not fail.
func run(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := newRootCommand(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	switch {
	case ctx.Err() != nil:
		return 130
	case err != nil:
		fmt.Fprintln(streams.ErrOut, "error: "+esc(explain(err)))
		return 1
	}
	return 0
}
