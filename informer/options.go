package informer

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/sharding"
)

// Options narrow what the informer watches. The zero Options watch every Lease in every
// namespace, unsharded, each watch event read as it arrives. The bounds below (MaxWatchBatch,
// MaxHistory) and the rest are checked by the command that sets Options from its flags, once,
// in the flags' words.
type Options struct {
	// Locks are the kinds of lock objects to watch; empty means Leases only.
	Locks []lock.Kind
	// Namespaces to watch; empty means all.
	Namespaces []string
	// ExcludeNamespaces are never watched (applied server-side with a field selector).
	ExcludeNamespaces []string
	// LeaseSelector is a label selector applied server-side.
	LeaseSelector string
	// Shard and TotalShards split Leases between replicas by a stable hash of namespace/name;
	// TotalShards 0 means 1.
	Shard, TotalShards int
	// WatchBatch is how long watch events may queue before they are read together
	// (see watchConfig); 0 reads each as it arrives.
	WatchBatch time.Duration
	// NoCandidates turns off watching LeaseCandidates (coordinated leader election), which
	// DiscoverCandidates otherwise enables wherever the API server serves them.
	NoCandidates bool
	// History bounds the election history kept per lock; the zero value keeps none.
	History lock.HistoryOptions
	// Observer, if set, is told of every lock observation and deletion: the class counters
	// and, with --events, the Events writer (Observers holds several).
	Observer Observer
	// Now is the clock; nil means time.Now. Tests replace it, and kubectl lease sets the
	// API server's.
	Now func() time.Time
	// Failed, if set, is told of every list or watch failure the reflectors report, with the
	// resource (as RBAC names it) and namespace of its scope, whether the scope's initial list
	// was cached (a failure after it is a watch's, or a relist's), and the error as the API
	// server answered: kubectl lease, a one-shot reader, stops on it with the fix where the
	// exporter retries.
	Failed func(resource, namespace string, listed bool, err error)
}

// MaxWatchBatch keeps batching well under the lease durations the metrics judge (10–60 s).
const MaxWatchBatch = 5 * time.Second

// checkLocks rejects a Kind outside the lock kinds table. It is the one check New makes:
// the other options come from flags the command has validated (cmd/lease-exporter's
// options.Validate), and a Kind is an open number no flag can produce.
func (o Options) checkLocks() error {
	for _, k := range o.Locks {
		if !k.Valid() {
			return fmt.Errorf("invalid lock kind %d", k)
		}
	}
	return nil
}

// locks returns the lock kinds to watch, each once, in Kind order.
func (o Options) locks() []lock.Kind {
	if len(o.Locks) == 0 {
		return lock.DefaultKinds()
	}
	kinds := slices.Clone(o.Locks)
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

func (o Options) totalShards() int { return max(o.TotalShards, 1) }

func (o Options) now() func() time.Time {
	if o.Now == nil {
		return time.Now
	}
	return o.Now
}

// tweakListOptions applies the server-side filters to every list and watch.
func (o Options) tweakListOptions() func(*metav1.ListOptions) {
	var sel []fields.Selector
	for _, ns := range o.ExcludeNamespaces {
		sel = append(sel, fields.OneTermNotEqualSelector("metadata.namespace", ns))
	}
	fieldSelector := fields.AndSelectors(sel...).String()
	return func(lo *metav1.ListOptions) {
		lo.LabelSelector = o.LeaseSelector
		lo.FieldSelector = fieldSelector
	}
}

// Owns reports whether the lock namespace/name is this replica's by Shard and TotalShards:
// the informer keeps only those, and --expect declares only those.
func (o Options) Owns(namespace, name string) bool {
	return o.totalShards() == 1 || sharding.Of(namespace, name, o.TotalShards) == o.Shard
}

// shardFilter returns nil when unsharded, so the common case costs nothing.
func (o Options) shardFilter() func(namespace, name string) bool {
	if o.totalShards() == 1 {
		return nil
	}
	return o.Owns
}

// Describe names the watched scope for log lines.
func (opts Options) Describe() string {
	var b strings.Builder
	if len(opts.Namespaces) == 0 {
		b.WriteString("all namespaces")
	} else {
		b.WriteString("namespaces " + strings.Join(opts.Namespaces, ","))
	}
	if len(opts.ExcludeNamespaces) > 0 {
		b.WriteString(" except " + strings.Join(opts.ExcludeNamespaces, ","))
	}
	if opts.LeaseSelector != "" {
		b.WriteString(", selector " + opts.LeaseSelector)
	}
	return b.String()
}
