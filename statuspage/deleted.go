package statuspage

import (
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// The locks that went: what the informer keeps of them (lock.Tombstone, within
// --history.deleted-retention), matched with the incarnation that replaced them, if any.

// tombstones returns what src keeps of deleted locks, oldest deletion first.
func tombstones(src Source) []*lock.Tombstone {
	var out []*lock.Tombstone
	src.RangeDeleted(func(t *lock.Tombstone) { out = append(out, t) })
	return out
}

// incarnations returns, for each lock with a tombstone, when the exporter first saw each of
// its incarnations it still knows of: the tombstones' and the live one's, if any (one lookup
// per lock, never a pass over the view). A tombstone's successor is the first incarnation seen
// at or after it went.
func incarnations(src Source, tombs []*lock.Tombstone) map[lock.Ref][]int64 {
	seen := make(map[lock.Ref][]int64, len(tombs))
	for _, t := range tombs {
		k := t.Lock.Ref()
		if _, ok := seen[k]; !ok {
			if l := src.Lookup(k.Kind, k.Namespace, k.Name); l != nil {
				seen[k] = append(seen[k], l.FirstSeen)
			}
		}
		seen[k] = append(seen[k], t.Lock.FirstSeen)
	}
	return seen
}

// deletedList returns the tombstones of locks matching f (its health filter aside: a lock
// that went is news either way), newest deletion first.
func deletedList(src Source, tombs []*lock.Tombstone, f Filter) []api.Deleted {
	seen := incarnations(src, tombs)
	out := []api.Deleted{}
	for _, t := range slices.Backward(tombs) {
		if d := deletedOf(t, seen[t.Lock.Ref()]); f.matchLock(d.Namespace, d.Class, d.Kind) {
			out = append(out, d)
		}
	}
	return out
}

// newestTombstone returns the latest tombstone of the lock k, nil if none is kept.
func newestTombstone(tombs []*lock.Tombstone, k lock.Ref) *lock.Tombstone {
	for _, t := range slices.Backward(tombs) {
		if t.Lock.Ref() == k {
			return t
		}
	}
	return nil
}

// previousIncarnation is, for a live lock l recreated within the retention, its previous
// incarnation with its history; nil when none is kept.
func previousIncarnation(src Source, tombs []*lock.Tombstone, l *lock.Lease) *api.Deleted {
	t := newestTombstone(tombs, l.Ref())
	if t == nil || t.Lock.UID == l.UID {
		return nil
	}
	d := deletedOf(t, incarnations(src, tombs)[l.Ref()])
	if t.History != nil {
		d.History = history(t.History.AfterRebuilt(rebuiltOf(src, t.Lock)), t.Lock, time.UnixMicro(t.DeletedAt), t.Held)
	}
	return &d
}

// problemDeleted is what the page names first for a lock that went.
const problemDeleted = "deleted"

// buried is the detail of a lock that went, from its tombstone: its last state as judged
// when it went, with its history and the deletion.
func buried(src Source, tombs []*lock.Tombstone, t *lock.Tombstone) api.Detail {
	at := time.UnixMicro(t.DeletedAt)
	d := detail(t.Lock, at, rebuiltOf(src, t.Lock))
	d.Healthy, d.Problems = false, append([]string{problemDeleted}, d.Problems...)
	if t.History != nil {
		d.History = history(t.History.AfterRebuilt(rebuiltOf(src, t.Lock)), t.Lock, at, t.Held)
	}
	gone := deletedOf(t, incarnations(src, tombs)[t.Lock.Ref()])
	d.Deleted = &gone
	return d
}
