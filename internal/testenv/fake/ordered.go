package fake

import (
	"slices"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// Snapshot is informer.Ordered's Snapshot for a test's hand-built view, which keeps no order:
// it reads v once (Range), every lock but node heartbeats and the node heartbeats nodes
// accepts, and each walk sorts what the Cache's walk would yield of it, in one batch. The
// collectors read only an Ordered view, so the sorting lives here rather than in the product.
func Snapshot(v informer.View, nodes func(*lock.Lease) bool) informer.Snapshot {
	var all sorted
	v.Range(func(l *lock.Lease) {
		if l.Class != lock.ClassNodeHeartbeat || nodes != nil && nodes(l) {
			all = append(all, l)
		}
	})
	return all
}

// sorted is a hand-built view's Snapshot: its locks in no order.
type sorted []*lock.Lease

func (s sorted) InOrder(o lock.Order, nodes func(*lock.Lease) bool, fn func([]*lock.Lease) bool) {
	var walk []*lock.Lease
	for _, l := range s {
		if l.Class != lock.ClassNodeHeartbeat || nodes != nil && nodes(l) {
			walk = append(walk, l)
		}
	}
	slices.SortFunc(walk, o.Compare)
	if len(walk) > 0 {
		_ = fn(walk)
	}
}

func (sorted) Release() {}

// Scan is informer.Ordered's Scan for a hand-built view: every lock in one batch.
func Scan(v informer.View, fn func([]*lock.Lease)) {
	var all []*lock.Lease
	v.Range(func(l *lock.Lease) { all = append(all, l) })
	if len(all) > 0 {
		fn(all)
	}
}
