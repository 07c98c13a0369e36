package statuspage

import (
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// The JSON form of the informer's records: a lock judged at a moment (lock.Judge), its
// history, a tombstone, a LeaseCandidate. Every page and answer is made of these.

// Summarize is l as judged at at: one lock of the JSON API's answers, and of kubectl
// lease's -o json, so the two cannot disagree.
func Summarize(l *lock.Lease, at time.Time) Lease { return summarize(l, at) }

// summarize is l as judged at at.
func summarize(l *lock.Lease, at time.Time) Lease {
	atMicros := at.UnixMicro()
	j := lock.Judge(l, atMicros)
	s := Lease{
		Namespace: l.Namespace(), Name: l.Name(), Kind: l.Kind().String(), Class: l.Class.String(),
		Holder: l.Holder, Held: j.Held, Standing: l.StandingAt(atMicros).String(), Healthy: j.Healthy(), Problems: j.Problems(),
		ObservedHolderChanges: l.ObservedHolderChanges,
	}
	if age, ok := l.RenewAge(atMicros); ok {
		s.RenewTime = timeOf(l.RenewTime)
		s.ObservedRenewTime = timeOf(l.ObservedRenewTime)
		s.RenewAgeSeconds = ptr(float64(age) / 1e6)
	}
	if l.HasAcquireTime {
		s.AcquireTime = timeOf(l.AcquireTime)
	}
	if l.HasDuration {
		s.LeaseDurationSeconds = ptr(l.DurationSeconds)
	}
	if l.HasTransitions {
		s.LeaseTransitions = ptr(l.Transitions)
	}
	if ms, ok := l.ClockSkew(); ok {
		s.HolderClockSkewSeconds = ptr(float64(ms) / 1e3)
	}
	if at := l.LastHolderChange(); at != 0 {
		s.LastHolderChange = timeOf(at)
	}
	return s
}

// detail is l as judged at at, with its expiry and history, rebuilt tenures first.
func detail(l *lock.Lease, at time.Time, rebuilt []lock.Tenure) Detail {
	d := Detail{Lease: summarize(l, at), UID: l.UID.String(), FirstSeen: *timeOf(l.FirstSeen)}
	if expiry, ok := l.Expiry(); ok {
		d.Expiry = timeOf(expiry)
	}
	if h := l.History(); h != nil {
		d.History = history(h.Snapshot().AfterRebuilt(rebuilt), l, at, d.Held)
	}
	return d
}

// history formats snap, l's history, judged at at, when l is held or not.
func history(snap lock.HistorySnapshot, l *lock.Lease, at time.Time, held bool) *History {
	out := &History{Tenures: []Tenure{}, RenewalIntervalsSeconds: []float64{}}
	for _, ms := range snap.RenewalIntervals {
		out.RenewalIntervalsSeconds = append(out.RenewalIntervalsSeconds, float64(ms)/1e3)
	}
	atMicros := at.UnixMicro()
	for i, t := range snap.Tenures {
		end := t.To
		if t.Ended == lock.Holding {
			end = atMicros
		}
		tn := Tenure{Holder: t.Holder, LastRenew: *timeOf(t.LastRenew), Ended: t.Ended.String(), SeenLive: t.Live, Rebuilt: t.Rebuilt}
		if t.StartKnown() {
			tn.From, tn.HeldSeconds = *timeOf(t.From), ptr(max(0, float64(end-t.From)/1e6))
		}
		if t.Ended != lock.Holding {
			tn.To = timeOf(t.To)
		}
		if i > 0 && snap.Tenures[i-1].To != 0 && t.StartKnown() {
			tn.GapBeforeSeconds = ptr(max(0, float64(t.From-snap.Tenures[i-1].To)/1e6))
		}
		out.Tenures = append(out.Tenures, tn)
	}
	if !held && len(snap.Tenures) > 0 {
		last := snap.Tenures[len(snap.Tenures)-1]
		since := last.To
		if last.Ended == lock.Holding {
			since, _ = l.Expiry()
		}
		if since != 0 {
			out.LeaderlessSince = timeOf(since)
		}
	}
	return out
}

// deletedOf formats t; firstSeen are the first sights of its lock's incarnations.
func deletedOf(t *lock.Tombstone, firstSeen []int64) Deleted {
	l := t.Lock
	d := Deleted{Namespace: l.Namespace(), Name: l.Name(), Kind: l.Kind().String(), Class: l.Class.String(),
		UID: l.UID.String(), Holder: l.Holder, Held: t.Held, DeletedAt: *timeOf(t.DeletedAt), SeenLive: t.Live}
	if l.ObservedRenewTime != 0 {
		d.LastObservedChange = timeOf(l.ObservedRenewTime)
	}
	next := int64(0)
	for _, at := range firstSeen {
		if at >= t.DeletedAt && (next == 0 || at < next) {
			next = at
		}
	}
	if next != 0 {
		d.RecreatedAt = timeOf(next)
	}
	return d
}

// CandidateJSON is c as the JSON API's detail carries it, judged at at; preferred is the
// Lease's spec.preferredHolder. kubectl lease describe prints it.
func CandidateJSON(c *lock.Candidate, preferred string, at time.Time) Candidate {
	return candidateOf(c, preferred, at.UnixMicro())
}

// candidateOf formats c, judged at atµ; preferred is the Lease's spec.preferredHolder.
func candidateOf(c *lock.Candidate, preferred string, atMicros int64) Candidate {
	cd := Candidate{Name: c.Name(), BinaryVersion: c.BinaryVersion, EmulationVersion: c.EmulationVersion,
		Strategy: c.Strategy, Fresh: c.Fresh(atMicros), Preferred: preferred != "" && c.Name() == preferred}
	if c.HasRenewTime {
		cd.RenewTime, cd.ObservedRenewTime = timeOf(c.RenewTime), timeOf(c.ObservedRenewTime)
	}
	if c.HasPingTime {
		cd.PingTime = timeOf(c.PingTime)
	}
	return cd
}
