// Package sharding is how --shard and --total-shards split the locks across replicas: the
// informer keeps a lock when Of says it is this replica's (informer/options.go). It is a
// package of its own because it needs nothing of the informer, and test/integration checks
// the running exporter's shards against the same function.
package sharding

import "hash/fnv"

// Of returns the shard a lock belongs to: FNV-1a of "namespace/name" modulo total.
// Names never change, so a lock stays on one shard for its whole life.
func Of(namespace, name string, total int) int {
	h := fnv.New64a()
	h.Write([]byte(namespace))
	h.Write([]byte{'/'})
	h.Write([]byte(name))
	return int(h.Sum64() % uint64(total))
}
