package fake

import (
	"slices"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// InOrder is informer.Ordered's InOrder for a test's hand-built view, which keeps no order:
// it collects what the Cache's walk would yield (every lock but node heartbeats, and the
// node heartbeats nodes accepts) and sorts it, in one batch. The collectors read only an
// Ordered view, so the sorting lives here rather than in the product.
func InOrder(v informer.View, o lock.Order, nodes func(*lock.Lease) bool, fn func([]*lock.Lease) bool) {
	var all []*lock.Lease
	v.Range(func(l *lock.Lease) {
		if l.Class != lock.ClassNodeHeartbeat || nodes != nil && nodes(l) {
			all = append(all, l)
		}
	})
	slices.SortFunc(all, o.Compare)
	if len(all) > 0 {
		_ = fn(all)
	}
}

// Scan is informer.Ordered's Scan for a hand-built view: every lock in one batch.
func Scan(v informer.View, fn func([]*lock.Lease)) {
	var all []*lock.Lease
	v.Range(func(l *lock.Lease) { all = append(all, l) })
	if len(all) > 0 {
		fn(all)
	}
}
