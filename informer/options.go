package informer

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Options narrow what the informer watches. The zero Options watch every Lease in every
// namespace, unsharded, each watch event read as it arrives.
type Options struct {
	// Locks are the kinds of lock objects to watch; empty means Leases only.
	Locks []Kind
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
	// (see WatchConfig); 0 reads each as it arrives.
	WatchBatch time.Duration
	// NoCandidates turns off watching LeaseCandidates (coordinated leader election), which
	// DiscoverCandidates otherwise enables wherever the API server serves them.
	NoCandidates bool
	// History bounds the election history kept per lock; the zero value keeps none.
	History HistoryOptions
	// Now is the clock; nil means time.Now. Tests replace it.
	Now func() time.Time
}

// MaxWatchBatch keeps batching well under the lease durations the metrics judge (10–60 s).
const MaxWatchBatch = 5 * time.Second

// OptionError is an invalid field of Options. Its message speaks of the option, never of a
// command's flag; a command that sets the field from a flag names the flag instead. (An
// invalid namespace is a plain error: its message names the namespace, which is enough.)
type OptionError struct {
	// Field is the invalid field, e.g. "LeaseSelector"; "Shard" for Shard and TotalShards
	// together; "ExcludeNamespaces" for ExcludeNamespaces combined with Namespaces.
	Field string
	Err   error
}

func (e *OptionError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *OptionError) Unwrap() error { return e.Err }

// Validate reports the first invalid option, saying how to fix it.
func (o Options) Validate() error {
	for _, ns := range slices.Concat(o.Namespaces, o.ExcludeNamespaces) {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("invalid namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	for _, k := range o.Locks {
		if !k.valid() {
			return &OptionError{"Locks", fmt.Errorf("invalid lock kind %d", k)}
		}
	}
	if len(o.Namespaces) > 0 && len(o.ExcludeNamespaces) > 0 {
		return &OptionError{"ExcludeNamespaces", errors.New("namespaces to watch and namespaces to exclude cannot be combined: list only the namespaces to watch")}
	}
	if _, err := labels.Parse(o.LeaseSelector); err != nil {
		return &OptionError{"LeaseSelector", fmt.Errorf("invalid lease selector %q: %w", o.LeaseSelector, err)}
	}
	if o.WatchBatch < 0 || o.WatchBatch > MaxWatchBatch {
		return &OptionError{"WatchBatch", fmt.Errorf("invalid watch batch %s: must be between 0 and %s (longer makes every metric lag)", o.WatchBatch, MaxWatchBatch)}
	}
	if err := o.History.validate(); err != nil {
		return err
	}
	if o.TotalShards < 0 || o.Shard < 0 || o.Shard >= o.totalShards() {
		return &OptionError{"Shard", fmt.Errorf("invalid sharding: shard %d of %d: need 0 <= shard < total shards", o.Shard, o.TotalShards)}
	}
	return nil
}

// locks returns the lock kinds to watch, each once, in Kind order.
func (o Options) locks() []Kind {
	if len(o.Locks) == 0 {
		return []Kind{KindLease}
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

// shardFilter returns nil when unsharded, so the common case costs nothing.
func (o Options) shardFilter() func(namespace, name string) bool {
	if o.totalShards() == 1 {
		return nil
	}
	return func(namespace, name string) bool { return ShardOf(namespace, name, o.TotalShards) == o.Shard }
}

// ShardOf returns the shard a Lease belongs to: FNV-1a of "namespace/name" modulo total.
// Names never change, so a Lease stays on one shard for its whole life.
func ShardOf(namespace, name string, total int) int {
	h := fnv.New64a()
	h.Write([]byte(namespace))
	h.Write([]byte{'/'})
	h.Write([]byte(name))
	return int(h.Sum64() % uint64(total))
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
