package lock

import "math"

// observe carries what the exporter observed about a Lease (first sight, holder changes, when
// the record last changed, the holder's clock skew) from prev, the cached record of the Lease
// or nil, into l, the record of its new state, and returns the record to cache: prev itself
// when a relist returned the Lease unchanged, so its memory is kept and l is dropped. now is
// the exporter's clock in Unix µs. live says the event was seen on a watch that is open and
// past its replay (see store.live): only then is now the moment the record changed.
//
// This is how client-go's electors judge a lease (observedTime + leaseDuration): by when they
// saw the record change, never by the holder's renewTime against their own clock, so a
// holder whose clock is off is still judged right. Where the exporter did not see the change
// happen (first sight, relists, replays), it falls back to the holder's renewTime corrected by
// the skew it last measured, and never later than now: a Lease dead for hours is not held.
//
// Keeping observed state inside the records, instead of a second map, keeps memory per
// Lease small; the store calls this in the order the watch delivered the events.
func observeLock(prev, l *Lease, now int64, live bool) *Lease {
	if prev != nil && prev.UID == l.UID && l.sameVersion(prev) {
		return prev
	}
	if prev == nil || prev.UID != l.UID {
		// First sight of this incarnation: a live ADDED event is its creation.
		l.FirstSeen = now
		l.ObservedRenewTime = changeSeenAt(l, now, live, 0, noSkew)
		if live {
			l.skewMillis = measureSkew(l, now)
		}
		return l
	}
	l.FirstSeen = prev.FirstSeen
	l.ObservedHolderChanges = prev.ObservedHolderChanges + holderChanges(prev, l)
	l.ObservedRenewals = prev.ObservedRenewals
	if renewal(prev, l) {
		l.ObservedRenewals++
	}
	l.skewMillis = prev.skewMillis
	l.ObservedRenewTime = prev.ObservedRenewTime
	renewed := l.HasRenewTime != prev.HasRenewTime || l.RenewTime != prev.RenewTime
	if renewed || l.Holder != prev.Holder {
		l.ObservedRenewTime = changeSeenAt(l, now, live, prev.ObservedRenewTime, prev.skewMillis)
	}
	if renewed && live {
		l.skewMillis = measureSkew(l, now)
	}
	return l
}

// changeSeenAt is when the record l, seen at now, changed by the exporter's clock: now when
// seen live, otherwise its renewTime corrected by the last measured skew, between the
// previous observation (the change came after it) and now. 0 without a renewTime.
func changeSeenAt(l *Lease, now int64, live bool, prevObserved int64, skew int32) int64 {
	switch {
	case !l.HasRenewTime:
		return 0
	case live:
		return now
	}
	at := l.RenewTime
	if skew != noSkew {
		at -= int64(skew) * 1e3
	}
	return min(max(at, prevObserved), now)
}

// measureSkew returns renewTime minus now in milliseconds, the holder's clock against ours,
// clamped to what the record holds; noSkew without a renewTime.
func measureSkew(l *Lease, now int64) int32 {
	if !l.HasRenewTime {
		return noSkew
	}
	ms := (l.RenewTime - now) / 1e3
	return int32(min(max(ms, math.MinInt32+1), math.MaxInt32))
}

// renewal reports whether l renews prev: the same holder, and a renewTime moved forward. A
// record that arrives in a relist after a watch gap counts once, for the last write: the
// writes the exporter missed are not invented.
func renewal(prev, l *Lease) bool {
	return l.Holder != "" && l.Holder == prev.Holder && l.HasRenewTime && prev.HasRenewTime && l.RenewTime > prev.RenewTime
}

// holderChanges counts the leadership changes between two observed states of a Lease: 1 when
// a different, non-empty holder took it, or the rise of spec.leaseTransitions if larger (the
// electors' own count, which also covers changes the exporter did not see, e.g. during a
// watch outage). A release (holder "") is not a change, as client-go does not count it: a
// graceful handover counts once.
func holderChanges(prev, l *Lease) uint32 {
	var n uint32
	if l.Holder != "" && l.Holder != prev.Holder {
		n = 1
	}
	if l.HasTransitions && prev.HasTransitions && l.Transitions > prev.Transitions {
		n = max(n, uint32(l.Transitions-prev.Transitions))
	}
	return n
}
