package informer

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// Observer passes successive states of Leases through the same observation a store applies
// to watch events (observe, then the history HistoryOptions keep), and deletions through the
// tombstone a store's deletion leaves (bury). The product does not use
// it: it is exported for the status page's tests, which build records as a store would have
// cached them after a chosen sequence of listed and live events at chosen times (relists
// included), which no fake clientset behind NewForClients can be made to deliver on cue,
// while a record's observed state cannot be set from outside the package. It is not safe
// for concurrent use.
type Observer struct {
	observe func(prev, l *Lease, now int64, live bool) *Lease
	last    map[string]*Lease
}

// NewObserver returns an Observer keeping history as opts say.
func NewObserver(opts HistoryOptions) *Observer {
	return &Observer{observe: lockObservation(opts), last: map[string]*Lease{}}
}

// Observe returns the record of l as a store would cache it after seeing l at now: live as
// an event on an open watch, otherwise as in a list.
func (o *Observer) Observe(l *coordinationv1.Lease, now time.Time, live bool) *Lease {
	r := Project(l)
	rec := o.observe(o.last[r.key], r, now.UnixMicro(), live)
	o.last[r.key] = rec
	return rec
}

// Delete returns the tombstone a store would keep of the lock namespace/name, as last
// observed, deleted at now: live as a DELETED event on the open watch, otherwise as noticed
// in a relist. It keeps one whatever the class and retention; nil if the lock was never
// observed.
func (o *Observer) Delete(namespace, name string, now time.Time, live bool) *Tombstone {
	last, ok := o.last[namespace+"/"+name]
	if !ok {
		return nil
	}
	delete(o.last, namespace+"/"+name)
	return bury(last, now.UnixMicro(), live)
}
