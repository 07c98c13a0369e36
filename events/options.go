package events

import (
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// The defaults of the token bucket: a few leader changes a minute are the most a healthy
// cluster makes (a control-plane upgrade moves each component's lock once or twice); a burst
// of 25 takes a rolling restart of a few dozen operators whole.
const (
	DefaultQPS   = 0.5
	DefaultBurst = 25
)

// Options configure the Events (the --events flags).
type Options struct {
	// Classes of locks whose changes make Events; others make none.
	Classes []lock.Class
	// Expected are the locks that must exist (--expect): ExpectedLeaseMissing.
	Expected []lock.Ref
	// QPS and Burst are the token bucket every Event takes a token from: one per writer, so
	// one for the cluster, or per shard.
	QPS   float64
	Burst int
	// Namespace and Name are the writer's election Lease (Elect).
	Namespace, Name string
	// Identity names this replica in that election.
	Identity string
	// Shard labels the metrics when TotalShards > 1.
	Shard, TotalShards int
	// Election timing; zero means client-go's defaults (15 s, 10 s, 2 s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Rebuild says to rebuild the history from the Events at start (Rebuild).
	Rebuild bool
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}
