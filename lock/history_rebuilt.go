package lock

// rebuiltSlack is how far a rebuilt tenure may end after the first observed one begins and
// still go before it: the writer's clock and this replica's, and the observed start, which
// for a tenure found in a list is the holder's acquireTime corrected by its skew.
const rebuiltSlack = 2_000_000 // µs

// AfterRebuilt is snap after the rebuilt tenures (read back from Events, package events)
// that ended before snap's first began: the
// current tenure, and whatever the exporter observed, always come from the Lease and the
// watch, and nothing read back from Events may contradict them. A rebuilt tenure the Events
// never showed end (its end fell between two writers) ended, as far as anyone can say, when
// the first observed one began, if that is another holder's; otherwise it is the observed
// one, and only the Lease may say when that began.
func (snap HistorySnapshot) AfterRebuilt(rebuilt []Tenure) HistorySnapshot {
	if len(rebuilt) == 0 {
		return snap
	}
	var before []Tenure
	for _, t := range rebuilt {
		if len(snap.Tenures) == 0 {
			if t.Ended != Holding {
				before = append(before, t)
			}
			continue
		}
		first := snap.Tenures[0]
		if t.Ended == Holding {
			if t.Holder == first.Holder || t.From >= first.From {
				continue
			}
			t.Ended, t.To, t.LastRenew = Unknown, first.From, first.From
		}
		if t.To > first.From+rebuiltSlack {
			continue
		}
		before = append(before, t)
	}
	if len(before) == 0 {
		return snap
	}
	snap.Tenures = append(before, snap.Tenures...)
	return snap
}
