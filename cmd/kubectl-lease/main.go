// Command kubectl-lease is the exporter's judgement at the command line, for the person on
// call: `kubectl lease` lists every election lock with who holds it and whether validly, as
// lease_held and lease_class_locks judge it (the same code, lock); `kubectl lease describe`
// shows one lock's record, candidates and, from an exporter, its history.
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
	// The informer's reflector logs each watch it reopens: -w's reader wants only rows.
	klog.SetLogger(logr.Discard())
	os.Exit(run(context.Background(), os.Args[1:], genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}

// run returns the exit code: 0, or 1 after one line "error: ..." on stderr, as kubectl's
// commands end. Interrupted (Ctrl-C ends -w), 130 as a shell reports SIGINT, and nothing
// said: what it cut short did not fail.
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
