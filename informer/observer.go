package informer

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// Observer passes successive states of Leases through the same observation a store applies
// to watch events (observe, then the history HistoryOptions keep). The product does not use
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
