package main

import (
	"io"
	"slices"
	"testing"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/sharding"
)

// TestExpectParsesEveryUseAndKind: --expect adds up over uses and commas, defaults to a
// Lease, and takes the kinds --locks watches.
func TestExpectParsesEveryUseAndKind(t *testing.T) {
	o, err := parseOptions([]string{"--locks=leases,configmaps", "--expect", "kube-system/kube-scheduler, kube-system/kube-controller-manager",
		"--expect=team-a/worker/configmaps"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := o.derived.collectors.Expected
	want := []lock.Ref{
		{Kind: lock.KindLease, Namespace: "kube-system", Name: "kube-scheduler"},
		{Kind: lock.KindLease, Namespace: "kube-system", Name: "kube-controller-manager"},
		{Kind: lock.KindConfigMap, Namespace: "team-a", Name: "worker"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("expected locks %v, want %v", got, want)
	}
}

// TestExpectKeepsOnlyThisShardsLocks: with --total-shards each replica exports the expected
// locks of its own shard, by the informer's hash, so together they export each exactly once.
func TestExpectKeepsOnlyThisShardsLocks(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	seen := map[string]int{}
	for shard := range 3 {
		args := []string{"--shard", string(rune('0' + shard)), "--total-shards", "3"}
		for _, n := range names {
			args = append(args, "--expect", "ns/"+n)
		}
		o, err := parseOptions(args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range o.derived.collectors.Expected {
			if s := sharding.Of(l.Namespace, l.Name, 3); s != shard {
				t.Errorf("shard %d exports %s, which is shard %d's", shard, l, s)
			}
			seen[l.Name]++
		}
	}
	for _, n := range names {
		if seen[n] != 1 {
			t.Errorf("ns/%s exported by %d shards, want 1", n, seen[n])
		}
	}
}
