package statuspage

import (
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// Deleted is a lock incarnation (one UID) the exporter saw deleted within the retention
// (--history.deleted-retention): who held it and when it went.
type Deleted struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Class     string `json:"class"`
	UID       string `json:"uid"`
	// Holder is the holder its last record named, "" when nobody held it.
	Holder string `json:"holder"`
	// Held says the holder's lease was still valid when the lock went.
	Held bool `json:"held"`
	// DeletedAt is when the exporter saw it go. SeenLive false: noticed in a relist or a
	// watch replay, so it went between LastObservedChange and DeletedAt.
	DeletedAt time.Time `json:"deleted_at"`
	SeenLive  bool      `json:"seen_live"`
	// LastObservedChange is when the exporter last saw its record change (the observed renew
	// time); null without a renewTime.
	LastObservedChange *time.Time `json:"last_observed_change"`
	// RecreatedAt is when the exporter first saw the lock's next incarnation (a new UID); null
	// while there is none.
	RecreatedAt *time.Time `json:"recreated_at"`
	// History is the incarnation's history, its last tenure ended "deleted" (or "expired");
	// only in a detail's previous_incarnation, and null for locks that keep none.
	History *History `json:"history,omitempty"`
}

// lockKey is how the pages address a lock: kind, namespace and name.
type lockKey struct{ kind, namespace, name string }

func keyOf(l *lock.Lease) lockKey { return lockKey{l.Kind().String(), l.Namespace(), l.Name()} }

// tombstones returns what view keeps of deleted locks, oldest deletion first; none for a
// view without them (the tests' hand-built views).
func tombstones(view informer.View) []*lock.Tombstone {
	dv, ok := view.(informer.DeletionView)
	if !ok {
		return nil
	}
	var out []*lock.Tombstone
	dv.RangeDeleted(func(t *lock.Tombstone) { out = append(out, t) })
	return out
}

// incarnations returns, for each lock with a tombstone, when the exporter first saw each of
// its incarnations it still knows of: the tombstones' and the live one's, if any. A
// tombstone's successor is the first incarnation seen at or after it went.
func incarnations(view informer.View, tombs []*lock.Tombstone) map[lockKey][]int64 {
	seen := make(map[lockKey][]int64, len(tombs))
	for _, t := range tombs {
		k := keyOf(t.Lock)
		seen[k] = append(seen[k], t.Lock.FirstSeen)
	}
	if len(seen) > 0 {
		view.Range(func(l *lock.Lease) {
			if s, ok := seen[keyOf(l)]; ok {
				seen[keyOf(l)] = append(s, l.FirstSeen)
			}
		})
	}
	return seen
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

// deletedList returns the tombstones of locks matching f (its health filter aside: a lock
// that went is news either way), newest deletion first.
func deletedList(view informer.View, tombs []*lock.Tombstone, f Filter) []Deleted {
	seen := incarnations(view, tombs)
	out := []Deleted{}
	for _, t := range slices.Backward(tombs) {
		if d := deletedOf(t, seen[keyOf(t.Lock)]); f.matchLock(d.Namespace, d.Class, d.Kind) {
			out = append(out, d)
		}
	}
	return out
}

// newestTombstone returns the latest tombstone of the lock k, nil if none is kept.
func newestTombstone(tombs []*lock.Tombstone, k lockKey) *lock.Tombstone {
	for _, t := range slices.Backward(tombs) {
		if keyOf(t.Lock) == k {
			return t
		}
	}
	return nil
}

// previousIncarnation is, for a live lock l recreated within the retention, its previous
// incarnation with its history; nil when none is kept.
func previousIncarnation(view informer.View, tombs []*lock.Tombstone, l *lock.Lease) *Deleted {
	t := newestTombstone(tombs, keyOf(l))
	if t == nil || t.Lock.UID == l.UID {
		return nil
	}
	d := deletedOf(t, incarnations(view, tombs)[keyOf(l)])
	if t.History != nil {
		d.History = history(*t.History, t.Lock, time.UnixMicro(t.DeletedAt), t.Held)
	}
	return &d
}

// problemDeleted is what the page names first for a lock that went.
const problemDeleted = "deleted"

// buried is the detail of a lock that went, from its tombstone: its last state as judged
// when it went, with its history and the deletion.
func buried(view informer.View, tombs []*lock.Tombstone, t *lock.Tombstone) Detail {
	at := time.UnixMicro(t.DeletedAt)
	d := detail(t.Lock, at)
	d.Healthy, d.Problems = false, append([]string{problemDeleted}, d.Problems...)
	if t.History != nil {
		d.History = history(*t.History, t.Lock, at, t.Held)
	}
	gone := deletedOf(t, incarnations(view, tombs)[keyOf(t.Lock)])
	d.Deleted = &gone
	return d
}

// deletedRow is a lock deleted recently, formatted.
type deletedRow struct {
	Deleted
	URL, When, Ago, LastChange, Recreated string
}

// deletedRowOf formats d; Ago is before now.
func deletedRowOf(d Deleted, now time.Time) deletedRow {
	r := deletedRow{Deleted: d, URL: lockURL(d.Namespace, d.Name, d.Kind), When: stamp(d.DeletedAt), Ago: ago(d.DeletedAt, now)}
	if d.LastObservedChange != nil {
		r.LastChange = stamp(*d.LastObservedChange)
	}
	if d.RecreatedAt != nil {
		r.Recreated = stamp(*d.RecreatedAt)
	}
	return r
}
