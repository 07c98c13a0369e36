package fake

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/lease-exporter/lease-exporter/lock"
)

// Observer passes successive states of Leases through the observation a store applies to
// watch events (lock.Observation: observe, then the history HistoryOptions keep), and
// deletions through the tombstone a store's deletion leaves (lock.Bury), as the informer's
// stores do. The collector's and the status page's tests build records with it as a store
// would have cached them after a chosen sequence of listed and live events at chosen times
// (relists included), which no fake clientset behind informer.NewForClients can be made to
// deliver on cue. It is not safe for concurrent use.
type Observer struct {
	observe func(prev, l *lock.Lease, now int64, live bool) *lock.Lease
	last    map[string]*lock.Lease
}

// NewObserver returns an Observer keeping history as opts say.
func NewObserver(opts lock.HistoryOptions) *Observer {
	return &Observer{observe: lock.Observation(opts).Records(), last: map[string]*lock.Lease{}}
}

// Observe returns the record of l as a store would cache it after seeing l at now: live as
// an event on an open watch, otherwise as in a list.
func (o *Observer) Observe(l *coordinationv1.Lease, now time.Time, live bool) *lock.Lease {
	r := lock.Project(l)
	rec := o.observe(o.last[r.StoreKey()], r, now.UnixMicro(), live)
	o.last[r.StoreKey()] = rec
	return rec
}

// Delete returns the tombstone a store would keep of the lock namespace/name, as last
// observed, deleted at now: live as a DELETED event on the open watch, otherwise as noticed
// in a relist. It keeps one whatever the class and retention; nil if the lock was never
// observed.
func (o *Observer) Delete(namespace, name string, now time.Time, live bool) *lock.Tombstone {
	last, ok := o.last[namespace+"/"+name]
	if !ok {
		return nil
	}
	delete(o.last, namespace+"/"+name)
	return lock.Bury(last, now.UnixMicro(), live)
}
