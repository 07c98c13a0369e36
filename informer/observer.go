package informer

import "github.com/lease-exporter/lease-exporter/lock"

// Observer is told of every lock observation as the stores make it, in event order, from
// every lock scope's goroutine: what the class counters (collector.Elections) count and the
// Events writer (package events) turns into the cluster's record of leadership changes. It
// must not block, and must not modify or retain
// the records' fields beyond the call.
type Observer interface {
	// Observed is the change from prev (nil at first sight) to rec, the record about to be
	// cached, at now (Unix µs by the exporter's clock), seen live on the watch or not.
	Observed(prev, rec *lock.Lease, now int64, live bool)
	// Gone is last, the last record of a lock incarnation that went at at.
	Gone(last *lock.Lease, at int64, live bool)
}

// Observers tells each of its observers, in order.
type Observers []Observer

// Observed is Observer's.
func (os Observers) Observed(prev, rec *lock.Lease, now int64, live bool) {
	for _, o := range os {
		o.Observed(prev, rec, now, live)
	}
}

// Gone is Observer's.
func (os Observers) Gone(last *lock.Lease, at int64, live bool) {
	for _, o := range os {
		o.Gone(last, at, live)
	}
}
