package lock

import (
	"slices"
	"sync"
	"time"
)

// HistoryOptions bound the election history the exporter keeps per lock (see History).
// The zero value keeps none.
type HistoryOptions struct {
	// Tenures is how many holder tenures (and so holder changes) are kept per lock; 0 keeps
	// no history at all.
	Tenures int
	// Renewals is how many intervals between observed renewals are kept per lock.
	Renewals int
	// Classes keep history; the others (node heartbeats, by default) keep none. They are
	// also the classes whose deleted locks leave a Tombstone.
	Classes []Class
	// Deleted is how long a deleted lock's Tombstone is kept; 0 keeps none. At most
	// MaxTombstones are kept whatever it says.
	Deleted time.Duration
	// Cleared, if set, is told the class of each lock whose newest tenure the history has
	// just recognised as ClearedByPredecessor (the informer counts them).
	Cleared func(Class)
}

// DefaultHistory is the history lease-exporter keeps unless told otherwise: leader-election
// locks only, sized so that even full rings keep the 300 B per Lease budget at 100k Leases
// (docs/benchmarks.md).
var DefaultHistory = HistoryOptions{Tenures: 4, Renewals: 8, Classes: []Class{ClassLeaderElection}, Deleted: time.Hour}

// MaxHistory bounds both rings: a history is for reading at a glance, not for storage.
const MaxHistory = 1000

// keeps reports whether a lock of class c keeps history.
func (o HistoryOptions) keeps(c Class) bool { return o.Tenures > 0 && slices.Contains(o.Classes, c) }

// Ending says how a tenure ended.
type Ending uint8

// The endings of a tenure.
const (
	// Holding: the tenure has not ended.
	Holding Ending = iota
	// Released: the holder wrote an empty holderIdentity (client-go's ReleaseOnCancel).
	Released
	// Expired: the holder stopped renewing for longer than the lease duration, and another
	// holder (or the same one, later) took the lock.
	Expired
	// TakenOver: another holder took the lock while it was still valid (preemption, or an
	// elector that does not wait for expiry).
	TakenOver
	// Unknown: the change arrived in a list or a watch replay while the lock still looked
	// valid, so the exporter cannot tell whether it was released in between or taken over.
	Unknown
	// Deleted: the lock object was deleted while its holder's lease was still valid (see
	// Tombstone); only the last tenure of a deleted incarnation ends so.
	Deleted
	// HandedOver: the holder let go, released or stopped renewing until its lease ran out,
	// while its record named another candidate as spec.preferredHolder: a coordinated
	// election (KEP-4355) moving leadership to the candidate the API server prefers, an
	// upgrade's handover; client-go's elector yields so. To is the release or the expiry. A
	// takeover of a still valid lease stays TakenOver.
	HandedOver
	// ClearedByPredecessor: the lock was emptied within a lease duration of this holder
	// taking it over, and this holder took it again within a lease duration: the previous
	// holder, stalled past its renew deadline and resumed, released a lock it no longer held,
	// and the successor, which never let go, acquired it anew. client-go's release() does so
	// with ReleaseOnCancel (it judges by its own stale record; internal/testenv/election's
	// TestClientGoStalledLeaderReleasesItsSuccessorsLease pins it). The exporter cannot see who
	// wrote a release, so it is recognised by what follows it.
	ClearedByPredecessor
)

// String is the ending's name in the JSON API and on the status page.
func (e Ending) String() string {
	return [...]string{"", "released", "expired", "taken_over", "unknown", "deleted", "handed_over", "cleared_by_predecessor"}[min(e, ClearedByPredecessor)]
}

// Tenure is one holder's continuous holding of a lock, as the exporter observed it. Times
// are Unix µs by the exporter's clock (see observeLock).
type Tenure struct {
	Holder string
	// From is when the holder took the lock: when the exporter saw it if Live, else the
	// acquireTime corrected by the measured skew; 0 when unknown (StartKnown), which only a
	// Rebuilt tenure can be: its Events showed it end but neither begin nor last.
	From int64
	// LastRenew is the last observed renewal (for a release: the release itself).
	LastRenew int64
	// To is when the tenure ended, 0 while it lasts: the release, the expiry (LastRenew plus
	// the lease duration), or the moment another holder took over.
	To    int64
	Ended Ending
	// Live says the tenure's start was seen live on the watch, not in a list or replay.
	Live bool
	// Rebuilt says the exporter did not observe the tenure itself but read it back from the
	// Events a writer wrote (package events): before this process started, or seen by
	// another replica.
	Rebuilt bool
}

// StartKnown reports whether t says when it began (From).
func (t Tenure) StartKnown() bool { return t.From != 0 }

// History is the recent election history of one lock incarnation: its last tenures and the
// intervals between its last observed renewals, in two bounded rings. The store's goroutine
// writes it (through observeLock, in event order); readers take a Snapshot. A recreated lock (new
// UID) starts a new History. A lock whose history is still what its record says has none of
// its own (keepHistory): Lease.History builds it from the record.
type History struct {
	mu       sync.Mutex
	tenures  []Tenure // ring of at most cap(tenures); next is the slot after the newest
	renewals []uint32 // ring of intervals in ms
	nextT    uint16
	nextR    uint16
	maxT     uint16 // the rings' bounds: HistoryOptions
	maxR     uint16
	// liveAt is the last observation seen live (Unix µs), 0 after one that was not: a
	// renewal interval is measured only between two renewals seen live, so none is missed.
	liveAt int64
	// inRecord marks the History that locks share while theirs is what their records say;
	// it holds only the rings' bounds.
	inRecord bool
}

// HistorySnapshot is a copy of a History, oldest first.
type HistorySnapshot struct {
	Tenures []Tenure
	// RenewalIntervals are the intervals between the last renewals seen live, in ms, measured
	// between their renewTimes (the holder's clock).
	RenewalIntervals []uint32
}

// History returns the lock's history, nil when it keeps none.
func (l *Lease) History() *History {
	if l.rare == nil || l.rare.history == nil {
		return nil
	}
	if h := l.rare.history; h.inRecord {
		return h.fromRecord(l)
	}
	return l.rare.history
}

// fromRecord returns, in a new History bounded as h, the history the record l says on its
// own: what begin opened when l was first seen in a list (at FirstSeen), one tenure of its
// holder from its acquireTime, none for an empty holder.
func (h *History) fromRecord(l *Lease) *History {
	out := &History{maxT: h.maxT, maxR: h.maxR}
	out.begin(l, l.FirstSeen, false, 0)
	return out
}

// onlyRepeats reports whether h, a History no record carries yet, says no more than l's
// record: nothing seen live, no renewal interval, at most the tenure fromRecord builds.
func (h *History) onlyRepeats(l *Lease) bool {
	if h.liveAt != 0 || len(h.renewals) != 0 || len(h.tenures) > 1 {
		return false
	}
	return slices.Equal(h.tenures, h.fromRecord(l).tenures)
}

// Snapshot copies the history under its lock.
func (h *History) Snapshot() HistorySnapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return HistorySnapshot{Tenures: ordered(h.tenures, h.nextT, h.maxT), RenewalIntervals: ordered(h.renewals, h.nextR, h.maxR)}
}

// LastHolderChange is the start or end of the newest tenure in l's history, 0 when it keeps
// none or has no tenure. The list page asks it of every lock, so a lock whose history is still
// what its record says answers from the record without building that history: its one
// tenure, as fromRecord's begin opens it, starts at acquiredAt of its first sight.
func (l *Lease) LastHolderChange() int64 {
	if l.rare == nil || l.rare.history == nil {
		return 0
	}
	h := l.rare.history
	if h.inRecord {
		if l.Holder == "" {
			return 0
		}
		return acquiredAt(l, l.FirstSeen, false, 0)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := newest(h.tenures, h.nextT, h.maxT); t != nil {
		return max(t.From, t.To)
	}
	return 0
}

// ordered returns a ring's elements oldest first; a ring that is not full yet is in order.
func ordered[T any](ring []T, next, limit uint16) []T {
	if len(ring) < int(limit) {
		return slices.Clone(ring)
	}
	return slices.Concat(ring[next:], ring[:next])
}

// push adds v to a ring that grows (doubling, never past limit) until it holds limit
// elements, then overwrites the oldest. Most locks never change holder, so their rings stay
// at one element.
func push[T any](ring []T, next *uint16, limit uint16, v T) []T {
	if len(ring) < int(limit) {
		if len(ring) == cap(ring) {
			grown := make([]T, len(ring), min(max(2*cap(ring), 1), int(limit)))
			copy(grown, ring)
			ring = grown
		}
		return append(ring, v)
	}
	ring[*next] = v
	*next = (*next + 1) % limit
	return ring
}

// beforeNewest returns the element before the newest of a ring, nil when it has fewer than two.
func beforeNewest[T any](ring []T, next, limit uint16) *T {
	switch {
	case len(ring) < 2:
		return nil
	case len(ring) < int(limit):
		return &ring[len(ring)-2]
	default:
		return &ring[(int(next)+len(ring)-2)%len(ring)]
	}
}

// newest returns the newest element of a ring, nil when empty.
func newest[T any](ring []T, next, limit uint16) *T {
	switch {
	case len(ring) == 0:
		return nil
	case len(ring) < int(limit):
		return &ring[len(ring)-1]
	default:
		return &ring[(int(next)+len(ring)-1)%len(ring)]
	}
}
