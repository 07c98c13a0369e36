package statuspage

import (
	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// Source is what the pages read, all of it the informer's cache (informer.Cache): the view
// the locks are judged from, the LeaseCandidates, the deleted locks, and one lock by its
// address, which a detail page looks up instead of passing over the view.
type Source interface {
	informer.CoordinatedView
	informer.DeletionView
	Lookup(kind lock.Kind, namespace, name string) *lock.Lease
}
