package integration_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// TestShardsPartitionTheUnshardedSet runs three shards next to an unsharded exporter over the
// same API server: together the shards must export exactly the unsharded set of Leases, each
// Lease on exactly one shard.
func TestShardsPartitionTheUnshardedSet(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "shards")
	for i := range 60 {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("lease-%02d", i)}}
		if _, err := env.Client.CoordinationV1().Leases(ns).Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const total = 3
	var shards []*exporterproc.Exporter
	for i := range total {
		shards = append(shards, env.StartReady(t, env.Bin, fmt.Sprintf("--shard=%d", i), fmt.Sprintf("--total-shards=%d", total)))
	}
	unsharded := env.StartReady(t, env.Bin)

	eventually(t, "shards to partition the unsharded set", func() error {
		all, err := unsharded.Scrape()
		if err != nil {
			return err
		}
		// Only this test's namespace: other tests create and delete Leases meanwhile.
		want := inNamespace(leaseKeys(all), ns)
		if len(want) != 60 {
			return fmt.Errorf("unsharded exporter sees %d of 60 Leases in %s", len(want), ns)
		}
		owner := map[string]int{}
		for i, e := range shards {
			s, err := e.Scrape()
			if err != nil {
				return err
			}
			for key := range inNamespace(leaseKeys(s), ns) {
				if prev, dup := owner[key]; dup {
					return fmt.Errorf("lease %s exported by shards %d and %d", key, prev, i)
				}
				owner[key] = i
			}
		}
		got := slices.Sorted(maps.Keys(owner))
		if !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
			return fmt.Errorf("shards export %d Leases, unsharded %d:\nshards:    %v\nunsharded: %v",
				len(got), len(want), got, slices.Sorted(maps.Keys(want)))
		}
		for i := range total {
			if !slices.Contains(slices.Collect(maps.Values(owner)), i) {
				return fmt.Errorf("shard %d exports nothing: hash does not spread", i)
			}
		}
		return nil
	})
}

func inNamespace(keys map[string]bool, ns string) map[string]bool {
	out := map[string]bool{}
	for k := range keys {
		if strings.HasPrefix(k, ns+"/") {
			out[k] = true
		}
	}
	return out
}
