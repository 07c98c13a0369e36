package informer

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
)

// Options narrow what the informer watches.
type Options struct {
	// Namespaces to watch; empty means all.
	Namespaces []string
	// ExcludeNamespaces are never watched (applied server-side with a field selector).
	ExcludeNamespaces []string
	// LeaseSelector is a label selector applied server-side.
	LeaseSelector string
	// Shard and TotalShards split Leases between replicas by a stable hash of namespace/name.
	Shard, TotalShards int
	// WatchConfig, when set, is the client configuration the watches use, with reads
	// batched by WatchBatch (see WatchConfig); nil means the client that lists watches too.
	WatchConfig *rest.Config
	// WatchBatch is how long watch events may queue before they are read together.
	WatchBatch time.Duration
	// Now is the clock; nil means time.Now. Tests replace it.
	Now func() time.Time
}

// maxWatchBatch keeps batching well under the lease durations the metrics judge (10–60 s).
const maxWatchBatch = 5 * time.Second

// Validate reports the first invalid option, saying how to fix it.
func (o Options) Validate() error {
	for _, ns := range slices.Concat(o.Namespaces, o.ExcludeNamespaces) {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("invalid namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	if len(o.Namespaces) > 0 && len(o.ExcludeNamespaces) > 0 {
		return fmt.Errorf("--namespaces and --namespaces-exclude cannot be combined: list only the namespaces to watch")
	}
	if _, err := labels.Parse(o.LeaseSelector); err != nil {
		return fmt.Errorf("invalid --lease-selector %q: %w", o.LeaseSelector, err)
	}
	if o.WatchBatch < 0 || o.WatchBatch > maxWatchBatch {
		return fmt.Errorf("invalid --kube.watch-batch-interval %s: must be between 0 and %s (longer makes every metric lag)", o.WatchBatch, maxWatchBatch)
	}
	if o.TotalShards < 1 || o.Shard < 0 || o.Shard >= o.TotalShards {
		return fmt.Errorf("invalid sharding --shard=%d --total-shards=%d: need 0 <= shard < total-shards", o.Shard, o.TotalShards)
	}
	return nil
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
	if o.TotalShards <= 1 {
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
