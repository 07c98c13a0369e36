package informer

// observe carries what the exporter observed about a Lease (first sight, holder changes, when
// renewTime last changed) from prev, the cached record of the Lease or nil, into l, the
// record of its new state, and returns the record to cache: prev itself when a relist
// returned the Lease unchanged, so its memory is kept and l is dropped. now is Unix µs.
//
// Keeping observed state inside the records, instead of a second map, keeps memory per
// Lease small; the store calls this in the order the watch delivered the events.
func observe(prev, l *Lease, now int64) *Lease {
	if prev != nil && prev.UID == l.UID && l.sameVersion(prev) {
		return prev
	}
	if prev == nil || prev.UID != l.UID {
		// First sight of this incarnation. Start the observed renew time from the reported
		// one, capped at our clock, so a Lease stale before we started does not look fresh.
		l.FirstSeen = now
		if l.HasRenewTime {
			l.ObservedRenewTime = min(l.RenewTime, now)
		}
		return l
	}
	l.FirstSeen = prev.FirstSeen
	l.ObservedHolderChanges = prev.ObservedHolderChanges
	if l.Holder != prev.Holder {
		l.ObservedHolderChanges++
	}
	l.ObservedRenewTime = prev.ObservedRenewTime
	if l.HasRenewTime != prev.HasRenewTime || l.RenewTime != prev.RenewTime {
		l.ObservedRenewTime = now
	}
	return l
}
