package alerts

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Config is one generator run: where to read, where to write, and how to customise.
type Config struct {
	In, Out string
	Options
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// ParseArgs reads the generator's command line. It lives here rather than in cmd/gen so that
// the drift test can replay the exact //go:generate lines of generate.go.
func ParseArgs(args []string, usage io.Writer) (Config, error) {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(usage)
	var (
		c       Config
		replica string
		exempt  listFlag
		forDur  listFlag
	)
	fs.StringVar(&c.In, "in", "alerts/lease-exporter.rules.yml", "source rule file")
	fs.StringVar(&c.Out, "out", "deploy/kustomize/prometheus-operator/prometheusrule.yaml", "output file, - for stdout")
	fs.StringVar(&c.Format, "format", formatPrometheusRule, "output format: prometheusrule, or rules for a plain Prometheus rule file")
	fs.StringVar(&c.RunbookBaseURL, "runbook-base-url", defaultRunbookBaseURL, "URL prefix of runbook_url; <alert name>.md is appended")
	fs.StringVar(&c.JobSelector, "job-selector", defaultJobSelector, "label matcher that selects the exporter's scrape job in every expr")
	fs.StringVar(&replica, "replica-labels", "instance,pod", "comma-separated labels that differ between HA replicas of the exporter; aggregated away so each lease alerts once")
	fs.Var(&exempt, "exempt", "NAMESPACE/LEASE[:ALERT]: never alert on this Lease (only for ALERT if given); repeatable")
	fs.Var(&forDur, "for", "ALERT=DURATION: override an alert's for duration (0 removes it); repeatable")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	// Only a changed list is passed on: the default is what the source already says.
	if replica != "instance,pod" {
		for _, l := range strings.Split(replica, ",") {
			c.ReplicaLabels = append(c.ReplicaLabels, strings.TrimSpace(l))
		}
	}
	for _, s := range exempt {
		e, err := parseExemption(s)
		if err != nil {
			return c, err
		}
		c.Exempt = append(c.Exempt, e)
	}
	for _, s := range forDur {
		name, d, ok := strings.Cut(s, "=")
		if !ok {
			return c, fmt.Errorf("--for %q: want ALERT=DURATION", s)
		}
		if c.For == nil {
			c.For = map[string]string{}
		}
		c.For[name] = d
	}
	return c, nil
}
