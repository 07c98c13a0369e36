// Command gen renders alerts/lease-exporter.rules.yml as the PrometheusRule in
// deploy/kustomize/prometheus-operator (the default; run it from the repository root), or
// as a customised plain rule file (--format rules). With no flags it reproduces the
// committed PrometheusRule, which alerts/generate_test.go checks. Flags: -h, docs/alerts.md.
//
//	go run ./alerts/cmd/gen                                   # regenerate the committed file
//	go run ./alerts/cmd/gen --runbook-base-url https://wiki.example.com/runbooks/ \
//	    --job-selector 'job="monitoring/lease-exporter"' --exempt batch/nightly-report \
//	    --for LeaseNoLeader=5m --out -                        # a customised copy on stdout
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/lease-exporter/lease-exporter/alerts"
)

func main() {
	err := run(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	c, err := alerts.ParseArgs(args, os.Stderr)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(c.In)
	if err != nil {
		return err
	}
	b, err := alerts.Generate(src, c.Options)
	if err != nil {
		return err
	}
	if c.Out == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(c.Out, b, 0o644)
}
