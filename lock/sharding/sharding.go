// Package sharding is how --shard and --total-shards split the locks across replicas, and
// the shard label a replica puts on its own series. The informer keeps a lock when Of says it
// is this replica's (informer/options.go). It is a package of its own because it needs
// nothing of the informer, and test/integration checks the running exporter's shards against
// the same function.
package sharding

import (
	"hash/fnv"
	"strconv"
)

// Of returns the shard a lock belongs to: FNV-1a of "namespace/name" modulo total.
// Names never change, so a lock stays on one shard for its whole life.
func Of(namespace, name string, total int) int {
	h := fnv.New64a()
	h.Write([]byte(namespace))
	h.Write([]byte{'/'})
	h.Write([]byte(name))
	return int(h.Sum64() % uint64(total))
}

// LabelName is the label a sharded replica puts on its own series (the class summary, the
// class counters, the Events writer's counters), so that a dashboard can take one replica of
// each shard and sum over shards.
const LabelName = "shard"

// Label is the shard label's value on a replica's own series: its shard number when the locks
// are split (total > 1), else "" (no label at all).
func Label(shard, total int) string {
	if total <= 1 {
		return ""
	}
	return strconv.Itoa(shard)
}

// ConstLabels are the constant labels of a replica's own series for the shard label value
// label (Label): none when it is "".
func ConstLabels(label string) map[string]string {
	if label == "" {
		return nil
	}
	return map[string]string{LabelName: label}
}
