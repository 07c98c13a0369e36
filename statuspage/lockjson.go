package statuspage

import (
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// The JSON form of what only the exporter's cache knows: a lock's detail with its history,
// and a tombstone. A lock judged at a moment and a Lease's LeaseCandidates are api's (Summarize,
// Candidates), which kubectl lease shares.

// detail is l as judged at at, with its expiry and history, rebuilt tenures first.
func detail(l *lock.Lease, at time.Time, rebuilt []lock.Tenure) api.Detail {
	d := api.Detail{Lease: api.Summarize(l, at), UID: l.UID.String(), FirstSeen: *timeOf(l.FirstSeen)}
	if expiry, ok := l.Expiry(); ok {
		d.Expiry = timeOf(expiry)
	}
	if h := l.History(); h != nil {
		d.History = history(h.Snapshot().AfterRebuilt(rebuilt), l, at, d.Held)
	}
	return d
}

// history formats snap, l's history, judged at at, when l is held or not.
func history(snap lock.HistorySnapshot, l *lock.Lease, at time.Time, held bool) *api.History {
	out := &api.History{Tenures: []api.Tenure{}, RenewalIntervalsSeconds: []float64{}}
	for _, ms := range snap.RenewalIntervals {
		out.RenewalIntervalsSeconds = append(out.RenewalIntervalsSeconds, float64(ms)/1e3)
	}
	atMicros := at.UnixMicro()
	for i, t := range snap.Tenures {
		end := t.To
		if t.Ended == lock.Holding {
			end = atMicros
		}
		tn := api.Tenure{Holder: t.Holder, LastRenew: *timeOf(t.LastRenew), Ended: t.Ended.String(), SeenLive: t.Live, Rebuilt: t.Rebuilt}
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
func deletedOf(t *lock.Tombstone, firstSeen []int64) api.Deleted {
	l := t.Lock
	d := api.Deleted{Namespace: l.Namespace(), Name: l.Name(), Kind: l.Kind().String(), Class: l.Class.String(),
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
