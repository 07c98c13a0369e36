package lock

// Tombstone is what the exporter keeps of a lock incarnation (one UID) after it went.
type Tombstone struct {
	// Lock is the incarnation's last record, as cached when it went: kind, namespace, name,
	// class, UID, last holder. Like every record, it must not be modified.
	Lock *Lease
	// DeletedAt is when the exporter saw it go, Unix µs by its own clock: the DELETED event,
	// or the relist that no longer listed it (or listed a new UID).
	DeletedAt int64
	// Live says the deletion was seen on the open watch as it happened. Otherwise it was
	// noticed in a relist or a watch replay: it went between the record's last observation
	// and DeletedAt.
	Live bool
	// Held says the lock was validly held when it went, as Held judges at DeletedAt.
	Held bool
	// History is the incarnation's history, its last tenure ended (Deleted while held,
	// else Expired at its expiry); nil for a class that keeps none.
	History *HistorySnapshot
}

// Bury returns the tombstone of last, the cached record of an incarnation seen gone at at.
func Bury(last *Lease, at int64, live bool) *Tombstone {
	t := &Tombstone{Lock: last, DeletedAt: at, Live: live, Held: last.Held(at)}
	if h := last.History(); h != nil {
		snap := h.Snapshot() // a copy: the History itself is left as it was
		if n := len(snap.Tenures); n > 0 && snap.Tenures[n-1].Ended == Holding {
			cur := &snap.Tenures[n-1]
			if t.Held {
				cur.Ended, cur.To = Deleted, at
			} else {
				cur.Ended, cur.To = Expired, min(expiryOf(last, at), at)
			}
		}
		t.History = &snap
	}
	return t
}
