package informer

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/lock/sharding"
)

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
	if sharding.Of("kube-system", "kube-scheduler", 4) != sharding.Of("kube-system", "kube-scheduler", 4) {
		t.Fatal("shard is not stable")
	}
	if (Options{TotalShards: 1}).shardFilter() != nil || (Options{}).shardFilter() != nil {
		t.Fatal("unsharded filter should be nil")
	}
}
