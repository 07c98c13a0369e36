package statuspage

import (
	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// Source is what the pages read, all of it the informer's cache (informer.Cache): the view
// the locks are judged from, the LeaseCandidates, the deleted locks, and one lock by its
// address, which a detail page looks up instead of passing over the view.
type Source interface {
	informer.CoordinatedView
	informer.DeletionView
	Lookup(kind lock.Kind, namespace, name string) *lock.Lease
}

// Rebuilt is the history read back from the exporter's own Events (events.History): each
// lock's tenures, by UID, that this process did not observe. Without --events there is none.
type Rebuilt interface {
	Tenures(uid string) []lock.Tenure
}

// withRebuilt is a Source with the rebuilt history (Handler.WithRebuilt).
type withRebuilt struct {
	Source
	Rebuilt
}

// rebuiltOf returns the tenures src rebuilt for l, nil without any.
func rebuiltOf(src Source, l *lock.Lease) []lock.Tenure {
	if r, ok := src.(Rebuilt); ok {
		return r.Tenures(l.UID.String())
	}
	return nil
}
