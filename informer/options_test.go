package informer

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string // substring of the error, "" for valid
	}{
		{Options{}, ""},
		{Options{TotalShards: 1}, ""},
		{Options{TotalShards: 1, Namespaces: []string{"Bad_NS"}}, `invalid namespace "Bad_NS"`},
		{Options{TotalShards: 1, LeaseSelector: "a in (b"}, "invalid lease selector"},
		{Options{TotalShards: 1, Namespaces: []string{"a"}, ExcludeNamespaces: []string{"b"}}, "cannot be combined"},
		{Options{TotalShards: 2, Shard: 2}, "need 0 <= shard < total shards"},
		{Options{TotalShards: 0, Shard: 1}, "invalid sharding"},
		{Options{TotalShards: -1}, "invalid sharding"},
		{Options{TotalShards: 1, WatchBatch: -time.Second}, "invalid watch batch -1s"},
	} {
		err := tc.opts.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestServerSideFilters(t *testing.T) {
	var lo metav1.ListOptions
	Options{ExcludeNamespaces: []string{"a", "b"}, LeaseSelector: "app=x"}.tweakListOptions()(&lo)
	if lo.LabelSelector != "app=x" || lo.FieldSelector != "metadata.namespace!=a,metadata.namespace!=b" {
		t.Fatalf("list options %+v", lo)
	}
}

func TestShardsPartitionLeases(t *testing.T) {
	const total = 3
	counts := make([]int, total)
	for i := range 3000 {
		ns, name := fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("lease-%d", i)
		owners := 0
		for s := range total {
			keep := Options{Shard: s, TotalShards: total}.shardFilter()
			if keep(ns, name) {
				owners++
				counts[s]++
			}
		}
		if owners != 1 {
			t.Fatalf("%s/%s owned by %d shards", ns, name, owners)
		}
	}
	for s, n := range counts {
		if n < 800 {
			t.Errorf("shard %d got %d of 3000 leases: hash is badly skewed", s, n)
		}
	}
	if ShardOf("kube-system", "kube-scheduler", 4) != ShardOf("kube-system", "kube-scheduler", 4) {
		t.Fatal("shard is not stable")
	}
	if (Options{TotalShards: 1}).shardFilter() != nil || (Options{}).shardFilter() != nil {
		t.Fatal("unsharded filter should be nil")
	}
}

// TestOptionErrorsNameFields: the library names Options' fields, never a command's flags; the
// command maps Field to its flag.
func TestOptionErrorsNameFields(t *testing.T) {
	for _, tc := range []struct {
		opts  Options
		field string
	}{
		{Options{ExcludeNamespaces: []string{"Bad_NS"}}, ""}, // names the namespace
		{Options{Namespaces: []string{"a"}, ExcludeNamespaces: []string{"b"}}, "ExcludeNamespaces"},
		{Options{LeaseSelector: "a in (b"}, "LeaseSelector"},
		{Options{WatchBatch: time.Minute}, "WatchBatch"},
		{Options{Shard: 1}, "Shard"},
	} {
		err := tc.opts.Validate()
		var invalid *OptionError
		if err == nil || tc.field != "" && (!errors.As(err, &invalid) || invalid.Field != tc.field) {
			t.Errorf("Validate(%+v) = %#v, want an OptionError for %s", tc.opts, err, tc.field)
		}
		if err != nil && strings.Contains(err.Error(), "--") {
			t.Errorf("Validate(%+v) = %q names a flag", tc.opts, err)
		}
	}
}
