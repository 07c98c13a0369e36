package lock

// expiryTolerance absorbs the difference between when the exporter and an elector saw the
// last renewal (watch batching, the elector's polling): a takeover this close to the expiry
// the exporter computed is an expiry, not a takeover of a valid lock.
const expiryTolerance = 1_000_000 // µs

// Observe observes one record of a lock, prev the cached one (nil at first sight) and l the
// record decoded from the API server, at now (Unix µs), live or not, and returns the
// observation classified: its Rec is the record to cache.
type Observe func(prev, l *Lease, now int64, live bool) Transition

// Observation returns the observation of lock records: observeLock, classified once by
// Classify, followed, for the classes opts keep, by the lock's history, which records the
// Transition as it was classified. Like observeLock, it runs in the store's goroutine in the
// order events arrive, and an unchanged record (a relist showing nothing new) returns before
// the history is touched.
func Observation(opts HistoryOptions) Observe {
	// inRecord is the rare fields of every lock whose history is what its record says.
	inRecord := &rareFields{history: &History{maxT: uint16(opts.Tenures), maxR: uint16(opts.Renewals), inRecord: true}}
	return func(prev, l *Lease, now int64, live bool) Transition {
		t := Classify(prev, observeLock(prev, l, now, live), now, live)
		if t.Rec != prev && opts.keeps(t.Rec.Class) && keepHistory(inRecord, t) && opts.Cleared != nil {
			opts.Cleared(t.Rec.Class)
		}
		return t
	}
}

// Records is o for a store, which caches what it returns and needs nothing more.
func (o Observe) Records() func(prev, l *Lease, now int64, live bool) *Lease {
	return func(prev, l *Lease, now int64, live bool) *Lease { return o(prev, l, now, live).Rec }
}

// keepHistory records the change from prev (nil at first sight) to l, the record about to be
// cached, in the history l then carries: the previous record's if it is the same incarnation,
// else a new one (a recreated lock starts over). It reports whether the change showed the
// newest tenure ClearedByPredecessor.
//
// A History is allocated only once something happened that the record cannot say: a lock
// found in a list (at start-up, by far the most) and not seen to change since has the
// history its record says, one tenure of its holder from its acquireTime (History builds it
// when asked), and carries the shared inRecord instead. What allocates is whatever makes
// the history more than that, measured, not listed: a holder change, a release, an expiry,
// a creation seen live, and also a renewal seen live, as it makes the next one's interval
// measurable and its skew corrects the tenure's start (docs/status-page.md).
func keepHistory(inRecord *rareFields, t Transition) (cleared bool) {
	prev, l, now, live := t.Prev, t.Rec, t.At, t.Live
	var h *History
	if prev != nil && prev.UID == l.UID && prev.rare != nil {
		h = prev.rare.history
	}
	switch {
	case h != nil && !h.inRecord:
		h.mu.Lock()
		defer h.mu.Unlock()
		cleared = h.record(t)
		attachHistory(prev, l, h)
		return cleared
	case h != nil: // what prev's record said, until now
		h = prev.History()
		cleared = h.record(t)
	case !live && l.FirstSeen == now: // first sight, in a list: begin would open what fromRecord builds
		markInRecord(inRecord, l)
		return false
	default: // first sight, live (or a lock whose class came to keep history)
		h = &History{maxT: inRecord.history.maxT, maxR: inRecord.history.maxR}
		h.begin(l, now, live, 0)
	}
	if h.onlyRepeats(l) {
		markInRecord(inRecord, l)
		return cleared
	}
	attachHistory(prev, l, h)
	return cleared
}

// markInRecord makes l, fresh from decode, carry the history its record says.
func markInRecord(inRecord *rareFields, l *Lease) {
	if l.rare == nil {
		l.rare = inRecord
	} else {
		l.rare.history = inRecord.history
	}
}

// attachHistory makes l carry h. l is fresh from decode, so its rare fields are its own; a
// record whose only rare field is the history shares the previous record's, so renewals
// allocate nothing for it.
func attachHistory(prev, l *Lease, h *History) {
	switch {
	case l.rare != nil:
		l.rare.history = h
	case prev != nil && prev.rare != nil && *prev.rare == rareFields{history: h}:
		l.rare = prev.rare
	default:
		l.rare = &rareFields{history: h}
	}
}

// record updates the history with the observation t, as Classify named it, and reports
// whether it showed the newest tenure ClearedByPredecessor; h.mu is held. The history
// decides nothing again: it places the tenures' ends and starts in time.
func (h *History) record(t Transition) (cleared bool) {
	prev, l, now, live := t.Prev, t.Rec, t.At, t.Live
	at := lastRenewSeen(l, now)
	cur := newest(h.tenures, h.nextT, h.maxT)
	holding := cur != nil && cur.Ended == Holding
	switch {
	case l.Holder == "":
		if holding {
			cur.Ended, cur.To, cur.LastRenew = t.Ending(), at, at
		}
		h.liveAt = 0
	case t.Kind == TransitionAcquired || !holding || l.Holder != cur.Holder:
		after := int64(0)
		if cur != nil {
			after = cur.LastRenew
		}
		cleared = h.clearedByPredecessor(cur, l, now)
		if holding {
			cur.Ended, cur.To = t.Ending(), acquiredAt(l, now, live, after)
			if t.Ended == Expired {
				cur.To = min(expiryOf(prev, cur.To), cur.To)
			}
		}
		h.begin(l, now, live, after)
	default: // the same holder: a renewal, or a write that moved nothing
		l.Holder = cur.Holder // one string for the record and its tenure
		if l.ObservedRenewTime == prev.ObservedRenewTime {
			return false // not a renewal (e.g. only the duration changed)
		}
		cur.LastRenew = at
		// The interval is measured between the two renewTimes, both by the holder's clock,
		// whose skew cancels out; the exporter's own receipt times would merge renewals
		// read in one watch batch.
		if live && h.liveAt != 0 && h.maxR > 0 && prev.HasRenewTime && l.RenewTime > prev.RenewTime {
			h.renewals = push(h.renewals, &h.nextR, h.maxR, uint32(min((l.RenewTime-prev.RenewTime)/1000, 1<<32-1)))
		}
		h.liveAt = 0
		if live {
			h.liveAt = now
		}
	}
	return cleared
}

// clearedByPredecessor marks cur, the newest tenure, ClearedByPredecessor when cur's holder
// took the lock over from another, the lock was emptied within a lease duration of that, and
// cur's holder now takes it again within a lease duration of the release: it never let go.
// client-go's robbed successor does exactly that: its next renewal conflicts, it reads the
// empty Lease and acquires it anew. A holder that released on purpose is gone, and a
// different holder after the release is an ordinary handover. It reports whether it marked.
func (h *History) clearedByPredecessor(cur *Tenure, l *Lease, now int64) bool {
	if cur == nil || cur.Ended != Released || l.Holder != cur.Holder || !l.HasDuration {
		return false
	}
	d := int64(l.DurationSeconds) * 1e6
	if cur.To-cur.From > d || now-cur.To > d {
		return false
	}
	if p := beforeNewest(h.tenures, h.nextT, h.maxT); p != nil && p.Holder != cur.Holder {
		cur.Ended = ClearedByPredecessor
		return true
	}
	return false
}

// begin opens a tenure for l's holder (none for an empty holder). after is the earliest
// its start may be placed at when it was not seen live.
func (h *History) begin(l *Lease, now int64, live bool, after int64) {
	h.liveAt = 0
	if l.Holder == "" {
		return
	}
	for _, t := range h.tenures {
		if t.Holder == l.Holder {
			l.Holder = t.Holder // holders alternate: keep one string per holder
			break
		}
	}
	t := Tenure{Holder: l.Holder, From: acquiredAt(l, now, live, after), LastRenew: lastRenewSeen(l, now), Live: live}
	h.tenures = push(h.tenures, &h.nextT, h.maxT, t)
	if live {
		h.liveAt = now
	}
}

// acquiredAt is when l's holder took the lock: now when seen live, else its acquireTime
// corrected by the measured skew (the observed renew time without one), between after and
// the observed renew time.
func acquiredAt(l *Lease, now int64, live bool, after int64) int64 {
	at := lastRenewSeen(l, now)
	if live || !l.HasAcquireTime {
		return at
	}
	acquired := l.AcquireTime
	if ms, ok := l.ClockSkew(); ok {
		acquired -= int64(ms) * 1e3
	}
	return min(max(acquired, after), at)
}

// preferredOther reports whether the held record l named another candidate than its holder
// as spec.preferredHolder: a holder that lets go then yields to it. It reads the last held
// record, not the release: client-go's release writes a record without the field.
func preferredOther(l *Lease, holder string) bool {
	return l != nil && l.PreferredHolder() != "" && l.PreferredHolder() != holder
}

// expiredBy reports whether the record l, once valid, had clearly expired by at.
func expiredBy(l *Lease, at int64) bool {
	expiry, ok := l.Expiry()
	return ok && expiry+expiryTolerance < at
}

// validBeyond reports whether the record l was clearly still valid at at: a takeover then
// did not wait for expiry.
func validBeyond(l *Lease, at int64) bool {
	expiry, ok := l.Expiry()
	return ok && l.Holder != "" && expiry > at+expiryTolerance
}

// expiryOf is when l expired; at for a record that never could be held.
func expiryOf(l *Lease, at int64) int64 {
	if expiry, ok := l.Expiry(); ok {
		return expiry
	}
	return at
}

func lastRenewSeen(l *Lease, now int64) int64 {
	if l.ObservedRenewTime == 0 {
		return now
	}
	return l.ObservedRenewTime
}
