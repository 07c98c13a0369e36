package lock

// Transition is one observation of a lock, classified once, in lock, for whatever reports it:
// the class counters (renewals, leaderless time) and the Events (a new holder, a release).
// Prev is the cached record (nil at first sight), Rec the record about to be cached (Prev
// itself when a relist showed nothing new), At when it was seen (Unix µs, the exporter's
// clock), and Live whether it was seen on an open watch as it happened rather than in a list
// or a reopened watch's catch-up.
type Transition struct {
	Prev, Rec *Lease
	At        int64
	Live      bool
	Kind      TransitionKind
	// Ended is how the previous holder's tenure ended, for TransitionAcquired and
	// TransitionReleased: Released when the previous record named nobody (or Rec names
	// nobody); else, seen live, Expired or TakenOver (Leaderless); else, found in a relist,
	// Expired when the new holder's acquireTime (corrected by the measured skew) is past the
	// previous record's expiry, or Unknown: the change fell in a gap and the record cannot
	// say whether the lock was released, taken over or let expire in between.
	Ended Ending
	// HandedOver says the previous holder let go (released, or let its lease expire for
	// another to take) while its last record named another candidate as
	// spec.preferredHolder: the coordinated handover of HandedOver. The holder back after its
	// own lapse handed over nothing.
	HandedOver bool
	// Leaderless is how long, in µs, the lock was without a valid holder before Rec's holder
	// took it; LeaderlessKnown says it was measured, which needs the take seen live.
	Leaderless      int64
	LeaderlessKnown bool
	// Renewed says the write counted as a renewal (Lease.ObservedRenewals rose: renewTime
	// moved forward under the same holder), whatever Kind says: the same holder back after
	// its lease expired renewed and acquired at once.
	Renewed bool
}

// TransitionKind is what an observation did to its lock.
type TransitionKind uint8

const (
	// TransitionNone: the same record again (a relist showing nothing new), or a write that
	// neither renewed nor changed the holder.
	TransitionNone TransitionKind = iota
	// TransitionFirstSight: the first record of an incarnation: the exporter saw nothing change.
	TransitionFirstSight
	// TransitionRenewal: the same holder renewed (renewTime moved forward).
	TransitionRenewal
	// TransitionAcquired: a holder took the lock: another than before, or the same one back
	// after its lease expired.
	TransitionAcquired
	// TransitionReleased: the holder wrote an empty holderIdentity.
	TransitionReleased
)

// Classify is the Transition from prev to rec seen at at, live or not. rec is what
// Observation returned for prev, so its observed fields (renewals counted, when the record
// changed) are already carried over.
func Classify(prev, rec *Lease, at int64, live bool) Transition {
	t := Transition{Prev: prev, Rec: rec, At: at, Live: live, Ended: Unknown}
	switch {
	case rec == prev:
		return t
	case prev == nil || prev.UID != rec.UID:
		t.Kind = TransitionFirstSight
		return t
	}
	t.Renewed = rec.ObservedRenewals > prev.ObservedRenewals
	micros, ended, taken := Leaderless(prev, rec, at, live)
	switch {
	case rec.Holder != "" && (rec.Holder != prev.Holder || taken):
		t.Kind = TransitionAcquired
		switch {
		case taken:
			t.Ended, t.Leaderless, t.LeaderlessKnown = ended, micros, true
		case prev.Holder == "":
			t.Ended = Released
		case !validBeyond(prev, acquiredAt(rec, at, false, 0)):
			t.Ended = Expired // found in a relist, but acquired after prev's lease ran out
		}
		t.HandedOver = t.Ended == Expired && rec.Holder != prev.Holder && preferredOther(prev, prev.Holder)
	case rec.Holder == "" && prev.Holder != "":
		t.Kind, t.Ended = TransitionReleased, Released
		t.HandedOver = preferredOther(prev, prev.Holder)
	case t.Renewed:
		t.Kind = TransitionRenewal
	}
	return t
}

// Ending is how the previous tenure ended as the history and the Events name it: Ended, or
// HandedOver when the holder let go to the preferred holder.
func (t Transition) Ending() Ending {
	if t.HandedOver {
		return HandedOver
	}
	return t.Ended
}
