package lock

// LeaderlessBuckets are lease_leaderless_seconds' upper bounds, in seconds. A graceful
// handover is the successor's next poll after the release (client-go polls every retry
// period, 2 s by default: at most that, usually well under); a failover after a crash waits
// for the lease to expire and the next poll (15 to 17 s with client-go's defaults, 40 s and
// more for a kubelet's); a stuck election takes minutes.
var LeaderlessBuckets = []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300}

// Leaderless measures how long the lock was without a valid holder before l's holder took it
// from prev, as seen live at now (Unix µs), and how the previous tenure ended:
//   - Released: prev names no holder; from when the exporter saw the lock released;
//   - Expired: prev's holder (another, or the same one back after a lapse) stopped renewing;
//     from prev's expiry as the exporter judged it (Lease.Expiry);
//   - TakenOver: prev's lease was still valid at now: nobody waited, 0.
//
// ok is false unless l takes the lock (a new holder, or the same after its lease expired) on
// a record of prev's incarnation seen live: a change found in a relist after a watch gap has
// no moment to measure to, and is not guessed.
func Leaderless(prev, l *Lease, now int64, live bool) (micros int64, ended Ending, ok bool) {
	if !live || prev == nil || prev.UID != l.UID || l.Holder == "" {
		return 0, 0, false
	}
	switch {
	case prev.Holder == "":
		if prev.ObservedRenewTime == 0 {
			return 0, 0, false // released without a renewTime: no moment it went
		}
		return max(0, now-prev.ObservedRenewTime), Released, true
	case l.Holder == prev.Holder && !expiredBy(prev, now):
		return 0, 0, false // a renewal
	case validBeyond(prev, now):
		return 0, TakenOver, true
	}
	return max(0, now-expiryOf(prev, now)), Expired, true
}
