package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/lease-exporter/lease-exporter/collector"
	"github.com/lease-exporter/lease-exporter/events"
	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/sharding"
	"github.com/lease-exporter/lease-exporter/statuspage"
)

// defaultListenAddress: the Prometheus exporter port range 9100-9999 is fully allocated, so
// we take a free port just above it.
const defaultListenAddress = ":10047"

// options are the command-line flags, named the way Prometheus operators already know them.
type options struct {
	listenAddress string
	webConfigFile string
	telemetryPath string
	maxRequests   int
	enablePprof   bool
	// grafanaURL is Grafana's base URL, for the status pages' links to the dashboards.
	grafanaURL string
	// externalURL is where people reach the exporter (routePrefix is its path).
	externalURL string
	logLevel    string
	logFormat   string
	client      informer.ClientOptions
	// watch holds the informer options that flags set as they are; informerOptions
	// derives the rest from the fields below.
	watch          informer.Options
	namespaces     string
	locks          lockList
	namespacesExcl string
	showVersion    bool
	// extendedMetrics adds the derivable families to the lean default (collector.Settings).
	extendedMetrics bool
	// nodeHeartbeats is how node-heartbeat Leases are exported: summary or per-lease
	// (collector.Settings).
	nodeHeartbeats string
	// reachTimeout bounds the start-up check that the API server answers at all.
	reachTimeout time.Duration
	// leaseCandidates watches LeaseCandidates wherever the API server serves them.
	leaseCandidates bool
	// historyClasses names the classes that keep an election history (lock.HistoryOptions).
	historyClasses string
	// expect lists the locks that must exist (collector.Settings.Expected).
	expect expectList
	// events turns on Kubernetes Events for leadership changes (package events), with the
	// flags below.
	events        bool
	eventsClasses string
	eventsQPS     float64
	eventsBurst   int
	eventsLock    string
	eventsRebuild bool
	// env is what the flags do not say (parseOptions reads it).
	env environment
	// derived is what the flags mean, once Validate has checked them (parseOptions sets it).
	derived derived
}

func (o *options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.listenAddress, "web.listen-address", defaultListenAddress, "Address to serve metrics, probes and the landing page on.")
	fs.StringVar(&o.webConfigFile, "web.config.file", "", "Path to an exporter-toolkit web config file enabling TLS and/or basic auth.")
	fs.StringVar(&o.telemetryPath, "web.telemetry-path", "/metrics", "Path under which to expose metrics.")
	fs.IntVar(&o.maxRequests, "web.max-requests", 10, "Maximum concurrent scrapes of the metrics path; excess requests get 503. 0 means no limit.")
	fs.BoolVar(&o.enablePprof, "web.enable-pprof", false, "Serve Go profiling endpoints under /debug/pprof/.")
	fs.StringVar(&o.externalURL, "web.external-url", "", "The URL people reach the exporter at, e.g. through a reverse proxy (https://example.com/lease-exporter/). Its path prefixes every route, which is also served at the root, and the status pages' links.")
	fs.StringVar(&o.grafanaURL, "web.grafana-url", "", "Grafana's URL (https://grafana.example.com) with the shipped dashboards: the status pages link to them, keeping its query (?var-cluster=prod in multi-cluster mode). Empty: no links.")
	fs.StringVar(&o.logLevel, "log.level", "info", "Log level: debug, info, warn or error.")
	fs.StringVar(&o.logFormat, "log.format", "text", "Log format: text (coloured on a terminal) or json.")
	fs.StringVar(&o.client.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig file. Default: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account.")
	fs.StringVar(&o.client.Context, "kube.context", "", "Kubeconfig context to use instead of the current context.")
	fs.Var(&o.locks, "locks", locksUsage())
	fs.StringVar(&o.namespaces, "namespaces", "", "Comma-separated namespaces to watch. Default: all namespaces.")
	fs.StringVar(&o.namespacesExcl, "namespaces-exclude", "", "Comma-separated namespaces not to watch.")
	fs.Var(&o.expect, "expect", expectUsage)
	fs.StringVar(&o.watch.LeaseSelector, "lease-selector", "", "Label selector: only Leases matching it are exported (e.g. 'app!=test').")
	fs.BoolVar(&o.extendedMetrics, "metrics.extended", false, "Also export the series the lean default leaves out because PromQL derives them (renew and expiry times, renew age, spec.leaseTransitions), and, with --metrics.node-heartbeats=per-lease, the leader-election series for node-heartbeat Leases.")
	fs.StringVar(&o.nodeHeartbeats, "metrics.node-heartbeats", nodeHeartbeatsSummary, "How node-heartbeat Leases (kube-node-lease) are exported: summary (per-class counts and a renew-age histogram, and a series per node only while its heartbeat is overdue) or per-lease (also lease_held and lease_observed_renew_timestamp_seconds for every node, as for every other lock).")
	fs.BoolVar(&o.leaseCandidates, "lease-candidates", o.leaseCandidates, "Watch LeaseCandidates (coordinated leader election) if the API server serves them and the exporter may list them; false never asks.")
	fs.IntVar(&o.watch.Shard, "shard", 0, "This replica's shard number, from 0 to --total-shards - 1.")
	fs.IntVar(&o.watch.TotalShards, "total-shards", 1, "Number of shards Leases are split across (stable hash of namespace/name).")
	fs.DurationVar(&o.reachTimeout, "kube.reach-timeout", o.reachTimeout, "How long to wait at start for the API server to answer before exiting with code 4.")
	fs.DurationVar(&o.watch.WatchBatch, "kube.watch-batch-interval", o.watch.WatchBatch, "Read watch events in batches at most this far apart, which cuts CPU per Lease update about fourfold at high churn; metrics lag by up to this much. 0 reads each event as it arrives.")
	fs.IntVar(&o.watch.History.Tenures, "history.changes", o.watch.History.Tenures, "Holder changes kept per lock for the status pages (/leases): each is a holder's tenure with how it began and ended. 0 keeps no history.")
	fs.IntVar(&o.watch.History.Renewals, "history.renewals", o.watch.History.Renewals, "Intervals between observed renewals kept per lock for the status pages.")
	fs.StringVar(&o.historyClasses, "history.classes", o.historyClasses, "Comma-separated classes of locks that keep a history: leader-election, apiserver-identity, node-heartbeat.")
	fs.DurationVar(&o.watch.History.Deleted, "history.deleted-retention", o.watch.History.Deleted, "How long the status pages keep a deleted lock of those classes (its last holder, history and when it went); 0 keeps none. Deletions are counted either way.")
	fs.BoolVar(&o.events, "events", false, "Write a Kubernetes Event (events.k8s.io/v1) regarding the lock for every leadership change the exporter sees: LeaderChanged, LeaseExpired, LeaseReleased, LeaseDeleted, ExpectedLeaseMissing, PreferredHolderChanged; and rebuild the status pages' history from them at start. Needs create, patch and list on events.events.k8s.io, and a Lease of its own to elect one writer (docs/events.md).")
	fs.StringVar(&o.eventsClasses, "events.classes", o.eventsClasses, "Comma-separated classes of locks whose changes make Events: leader-election, apiserver-identity, node-heartbeat.")
	fs.Float64Var(&o.eventsQPS, "events.qps", o.eventsQPS, "Events per second the token bucket refills with (one bucket for the cluster, or per shard, in the elected writer); changes beyond it are dropped and counted (lease_exporter_events_dropped_total).")
	fs.IntVar(&o.eventsBurst, "events.burst", o.eventsBurst, "Events the token bucket holds: how many changes at once are written in full.")
	fs.StringVar(&o.eventsLock, "events.lock", "", "NAMESPACE/NAME of the Lease the replicas elect their one Events writer with; a sharded exporter adds -shard-<i>. Default: the Pod's namespace (POD_NAMESPACE) and "+events.DefaultLockName+".")
	fs.BoolVar(&o.eventsRebuild, "events.rebuild", o.eventsRebuild, "With --events, rebuild the status pages' history from the exporter's Events at start, taking only Events in the namespace of a lock the exporter has seen; anyone who may create Events in that namespace can still word one as the exporter would (docs/security.md). false shows only what this process observes.")
	fs.BoolVar(&o.showVersion, "version", false, "Print version information and exit.")
	for old, current := range hiddenAliases {
		f := fs.Lookup(current)
		fs.Var(f.Value, old, "Deprecated spelling of --"+current+".")
	}
}

// The values of --metrics.node-heartbeats.
const (
	nodeHeartbeatsSummary  = "summary"
	nodeHeartbeatsPerLease = "per-lease"
)

// hiddenAliases are earlier spellings of renamed flags, accepted so existing manifests keep
// working, and left out of --help and the README. Old spelling -> current name.
var hiddenAliases = map[string]string{"kube-context": "kube.context"}

// printUsage is the flag set's usage text: every flag except the hidden aliases.
func printUsage(fs *flag.FlagSet) {
	fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
	visible := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if _, hidden := hiddenAliases[f.Name]; !hidden {
			visible.Var(f.Value, f.Name, f.Usage)
		}
	})
	visible.SetOutput(fs.Output())
	visible.PrintDefaults()
}

// derived is what the flags mean, worked out once by Validate from flags it has checked:
// the informer's options and the collectors' settings (with the expected locks).
type derived struct {
	informer   informer.Options
	collectors collector.Settings
	// events is nil without --events.
	events *events.Options
}

// Validate reports the first invalid flag, naming it and saying what is expected, and returns
// what the flags mean: each is parsed here, once. It changes nothing in o.
func (o *options) Validate() (derived, error) {
	var d derived
	classes, err := parseClasses(o.historyClasses)
	if err != nil {
		return d, err
	}
	if err := o.locks.validate(); err != nil {
		return d, err
	}
	if err := o.validateWatch(); err != nil {
		return d, err
	}
	d.informer = o.informerOptions(classes)
	expected, err := o.expectedLocks(d.informer)
	if err != nil {
		return d, err
	}
	switch o.nodeHeartbeats {
	case nodeHeartbeatsSummary, nodeHeartbeatsPerLease:
	default:
		return d, fmt.Errorf("invalid --metrics.node-heartbeats %q: use %s (the default: counts, and a series per overdue node) or %s (two series per node)",
			o.nodeHeartbeats, nodeHeartbeatsSummary, nodeHeartbeatsPerLease)
	}
	d.collectors = collector.Settings{Extended: o.extendedMetrics, PerLeaseNodeHeartbeats: o.nodeHeartbeats == nodeHeartbeatsPerLease,
		Shard: sharding.Label(o.watch.Shard, o.watch.TotalShards), Expected: expected}
	if d.events, err = o.eventsOptions(expected); err != nil {
		return d, err
	}
	return d, o.validateServing()
}

// validateServing checks the flags that say how the exporter serves and logs.
func (o *options) validateServing() error {
	switch o.logLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("invalid --log.level %q: use debug, info, warn or error", o.logLevel)
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		return fmt.Errorf("invalid --log.format %q: use text or json", o.logFormat)
	}
	if !strings.HasPrefix(o.telemetryPath, "/") || o.telemetryPath == "/" || o.telemetryPath == healthzPath || o.telemetryPath == readyzPath ||
		statuspage.Reserved(o.telemetryPath) {
		return fmt.Errorf("invalid --web.telemetry-path %q: must start with / and not be one of /, %s, %s, nor under %s or %s",
			o.telemetryPath, healthzPath, readyzPath, statuspage.Path, statuspage.APIPrefix)
	}
	if o.reachTimeout <= 0 {
		return fmt.Errorf("invalid --kube.reach-timeout %s: must be positive", o.reachTimeout)
	}
	if o.maxRequests < 0 {
		return fmt.Errorf("invalid --web.max-requests %d: must be 0 (no limit) or more", o.maxRequests)
	}
	if err := o.validateURLs(); err != nil {
		return err
	}
	if o.webConfigFile != "" {
		if err := web.Validate(o.webConfigFile); err != nil {
			return fmt.Errorf("invalid --web.config.file %s: %w", o.webConfigFile, err)
		}
	}
	return nil
}

// validateURLs checks --web.external-url and --web.grafana-url.
func (o *options) validateURLs() error {
	if o.externalURL != "" {
		if u, err := url.Parse(o.externalURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("invalid --web.external-url %q: want the absolute http(s) URL people reach the exporter at, without query, such as https://example.com/lease-exporter/", o.externalURL)
		}
		p := o.routePrefix()
		for _, route := range []string{o.telemetryPath, statuspage.Path, statuspage.APIPrefix, healthzPath, readyzPath, "/debug/pprof"} {
			if p != "" && (route == p || strings.HasPrefix(route, p+"/")) {
				return fmt.Errorf("invalid --web.external-url %q: its path %s would hide the exporter's own route %s; pick another path", o.externalURL, p, route)
			}
		}
	}
	if o.grafanaURL != "" {
		if u, err := url.Parse(o.grafanaURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
			return fmt.Errorf("invalid --web.grafana-url %q: want Grafana's absolute http(s) URL, such as https://grafana.example.com or https://example.com/grafana/?var-cluster=prod", o.grafanaURL)
		}
	}
	return nil
}

// validateWatch checks the flags that say what the informer watches.
func (o *options) validateWatch() error {
	w, watched, excluded := o.watch, splitList(o.namespaces), splitList(o.namespacesExcl)
	for _, ns := range slices.Concat(watched, excluded) {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("invalid namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	if watched != nil && excluded != nil {
		return errors.New("--namespaces and --namespaces-exclude cannot be combined: list only the namespaces to watch")
	}
	if _, err := labels.Parse(w.LeaseSelector); err != nil {
		return fmt.Errorf("invalid --lease-selector %q: %w", w.LeaseSelector, err)
	}
	if w.WatchBatch < 0 || w.WatchBatch > informer.MaxWatchBatch {
		return fmt.Errorf("invalid --kube.watch-batch-interval %s: must be between 0 and %s (longer makes every metric lag)",
			w.WatchBatch, informer.MaxWatchBatch)
	}
	if h := w.History; h.Tenures < 0 || h.Tenures > lock.MaxHistory || h.Renewals < 0 || h.Renewals > lock.MaxHistory {
		return fmt.Errorf("invalid --history.changes=%d --history.renewals=%d: each must be between 0 and %d",
			h.Tenures, h.Renewals, lock.MaxHistory)
	}
	if d := w.History.Deleted; d < 0 || d > informer.MaxDeletedRetention {
		return fmt.Errorf("invalid --history.deleted-retention %s: must be between 0 (keep none) and %s", d, informer.MaxDeletedRetention)
	}
	if w.TotalShards < 0 || w.Shard < 0 || w.Shard >= max(w.TotalShards, 1) {
		return fmt.Errorf("invalid sharding --shard=%d --total-shards=%d: need 0 <= shard < total-shards", w.Shard, w.TotalShards)
	}
	return nil
}

// informerOptions derives what the informer watches from the flags Validate has checked, with
// the classes that keep a history.
func (o *options) informerOptions(historyClasses []lock.Class) informer.Options {
	w := o.watch
	w.Namespaces, w.ExcludeNamespaces = splitList(o.namespaces), splitList(o.namespacesExcl)
	w.Locks = o.locks.Kinds()
	w.NoCandidates = !o.leaseCandidates
	w.History.Classes = historyClasses
	return w
}

// expectedLocks returns this replica's expected locks, checked against what w watches. With
// --total-shards each replica declares only its own shard's, so that no replica reports
// another's lock missing.
func (o *options) expectedLocks(w informer.Options) ([]lock.Ref, error) {
	locks, err := o.expect.locks(w.Locks, w.Namespaces, w.ExcludeNamespaces)
	return slices.DeleteFunc(locks, func(l lock.Ref) bool { return !w.Owns(l.Namespace, l.Name) }), err
}

// parseOptions parses args; an invalid flag is a usageError (exit code 2), reported after
// the flag package has printed usage.
func parseOptions(args []string, stderr io.Writer) (*options, error) {
	o := &options{reachTimeout: 15 * time.Second, watch: informer.Options{WatchBatch: 250 * time.Millisecond, History: lock.DefaultHistory},
		leaseCandidates: true}
	o.historyClasses = classNames(lock.DefaultHistory.Classes)
	// Node heartbeats make no Events by default: a zone outage would turn thousands of
	// expiring heartbeats into as many Events.
	o.eventsClasses = lock.ClassLeaderElection.String()
	o.eventsQPS, o.eventsBurst = events.DefaultQPS, events.DefaultBurst
	o.eventsRebuild = true
	fs := flag.NewFlagSet("lease-exporter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.AddFlags(fs)
	fs.Usage = func() { printUsage(fs) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Errorf("unexpected argument %q: lease-exporter takes only flags", fs.Arg(0))}
	}
	o.env = readEnvironment()
	d, err := o.Validate()
	if err != nil {
		return nil, usageError{err}
	}
	o.derived = d
	return o, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// eventsOptions checks the --events flags and returns what they mean, nil without --events.
func (o *options) eventsOptions(expected []lock.Ref) (*events.Options, error) {
	classes, err := parseClassesOf("events.classes", o.eventsClasses)
	if err != nil || !o.events {
		return nil, err
	}
	if o.eventsQPS <= 0 || o.eventsBurst < 1 {
		return nil, fmt.Errorf("invalid --events.qps=%g --events.burst=%d: the rate must be positive and the bucket hold at least 1", o.eventsQPS, o.eventsBurst)
	}
	ns, name := o.env.podNamespace, events.DefaultLockName
	if o.eventsLock != "" {
		var ok bool
		ns, name, ok = strings.Cut(o.eventsLock, "/")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return nil, fmt.Errorf("invalid --events.lock %q: want NAMESPACE/NAME of a Lease, such as monitoring/lease-exporter-events", o.eventsLock)
		}
	}
	w := o.watch
	return &events.Options{Classes: classes, Expected: expected, QPS: o.eventsQPS, Burst: o.eventsBurst, Rebuild: o.eventsRebuild,
		Namespace: ns, Name: events.LockName(name, w.Shard, w.TotalShards), Identity: o.env.identity,
		Shard: w.Shard, TotalShards: w.TotalShards}, nil
}

func parseClasses(s string) ([]lock.Class, error) { return parseClassesOf("history.classes", s) }

// parseClassesOf parses the classes flag named flagName.
func parseClassesOf(flagName, s string) ([]lock.Class, error) {
	var out []lock.Class
	for _, name := range splitList(s) {
		c, err := lock.ParseClass(name)
		if err != nil {
			return nil, fmt.Errorf("invalid --%s %q: %w", flagName, s, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func classNames(classes []lock.Class) string {
	names := make([]string, len(classes))
	for i, c := range classes {
		names[i] = c.String()
	}
	return strings.Join(names, ",")
}

// routePrefix is --web.external-url's path without its trailing slash ("" for none or "/").
func (o *options) routePrefix() string {
	u, err := url.Parse(o.externalURL)
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.EscapedPath(), "/")
}
