package informer

import "github.com/lease-exporter/lease-exporter/lock"

// Observer is told of every lock observation as the stores make it, in event order, from
// every lock scope's goroutine: what the class counters (collector.Elections) count and the
// Events writer (package events) turns into the cluster's record of leadership changes. It
// must not block, and must not modify or retain
// the records' fields beyond the call.
type Observer interface {
	// Observed is one observation, classified once by lock.Classify: the change from the
	// cached record (nil at first sight) to the record about to be cached.
	Observed(t lock.Transition)
	// Gone is last, the last record of a lock incarnation that went at at.
	Gone(last *lock.Lease, at int64, live bool)
}

// Observers tells each of its observers, in order.
type Observers []Observer

// Observed is Observer's.
func (os Observers) Observed(t lock.Transition) {
	for _, o := range os {
		o.Observed(t)
	}
}

// Gone is Observer's.
func (os Observers) Gone(last *lock.Lease, at int64, live bool) {
	for _, o := range os {
		o.Gone(last, at, live)
	}
}
