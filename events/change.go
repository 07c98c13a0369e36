package events

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// MinExpiredGrace is the least time past its expiry a lock must stay untaken before
// LeaseExpired is written; the grace is the lock's lease duration when that is longer. An
// elector's followers poll well within a lease duration (client-go every 2 s of 15 s,
// OpenShift's every 26 s of 137 s), so an ordinary failover takes the lock within the grace
// and makes one LeaderChanged, not an expiry and a change.
const MinExpiredGrace = 10 * time.Second

// expiredGrace is how long past its expiry l must stay untaken before LeaseExpired, in µs.
func expiredGrace(l *lock.Lease) int64 {
	return max(MinExpiredGrace, time.Duration(l.DurationSeconds)*time.Second).Microseconds()
}

// tracked is what the tracker remembers of one lock between observations: what the records
// alone do not say once they change (who held it before a release, since when).
type tracked struct {
	// uid is the incarnation tracked: a relist that shows a lock recreated observes the new
	// incarnation before it reports the old one gone, which must not forget the new one.
	uid string
	// holder is the current holder, or after a release the holder that released.
	holder string
	// since is when holder's tenure began (Unix µs, the exporter's clock), 0 if unknown.
	since int64
	// preferred is the last held record's spec.preferredHolder, to say when it changes.
	preferred string
	// handedOver says holder's release was a handover (lock.Transition.HandedOver): the take
	// that follows, whose released record names no preferred holder, says so too.
	handedOver bool
	// heldRenew is the ObservedRenewTime of the record the last sweep judged held, 0 after
	// its expiry was written: LeaseExpired is written once, and only for an expiry this
	// process saw happen (a lock found long expired at start-up is old news).
	heldRenew int64
}

// tracker turns observations into Changes. Every replica tracks every observation, writer or
// not, so the replica that becomes the writer knows who held each lock and which expiries
// were already seen, and writes nothing twice. Store goroutines of several scopes call it
// concurrently; a renewal, by far the commonest observation, returns before taking the lock.
type tracker struct {
	classes  [lock.NumClasses]bool
	expected []lock.Ref
	// send hands an Event to the writer; false when this replica is not the writer, so an
	// ExpectedLeaseMissing is stated by whichever replica is elected.
	send func(ref *corev1.ObjectReference, eventType string, c Change) bool

	mu      sync.Mutex
	locks   map[lock.Ref]*tracked
	missing map[lock.Ref]bool
}

func newTracker(classes []lock.Class, expected []lock.Ref, send func(*corev1.ObjectReference, string, Change) bool) *tracker {
	t := &tracker{expected: expected, send: send, locks: map[lock.Ref]*tracked{}, missing: map[lock.Ref]bool{}}
	for _, c := range classes {
		t.classes[c] = true
	}
	return t
}

// regarding is the reference an Event about l carries.
func regarding(l *lock.Lease) *corev1.ObjectReference {
	meta := l.GetObjectMeta()
	gv := l.Kind().GVR().GroupVersion()
	return &corev1.ObjectReference{APIVersion: gv.String(), Kind: l.Kind().String(), Namespace: l.Namespace(), Name: l.Name(),
		UID: meta.GetUID(), ResourceVersion: meta.GetResourceVersion()}
}

// sinceOf is when l's holder took the lock, as far as one record tells: now if seen live,
// else its acquireTime.
func sinceOf(l *lock.Lease, now int64, live bool) int64 {
	switch {
	case l.Holder == "":
		return 0
	case live:
		return now
	case l.HasAcquireTime:
		return l.AcquireTime
	}
	return 0
}

// Observed is informer.Observer's: one observation, classified once by lock.Classify. The
// tracker decides only what the Events add to it: who held the lock before a release (the
// released record names nobody), since when, and the preferred holder a handover was asked for.
func (t *tracker) Observed(tr lock.Transition) {
	prev, rec := tr.Prev, tr.Rec
	if rec == prev || !t.classes[rec.Class] {
		return
	}
	if (tr.Kind == lock.TransitionNone || tr.Kind == lock.TransitionRenewal) && samePreferred(prev, rec) {
		return // a renewal
	}
	t.mu.Lock()
	k := rec.Ref()
	s := t.locks[k]
	if s == nil || tr.Kind == lock.TransitionFirstSight {
		t.locks[k] = &tracked{uid: string(rec.GetObjectMeta().GetUID()), holder: rec.Holder, since: sinceOf(rec, tr.At, tr.Live), preferred: rec.PreferredHolder()}
		t.mu.Unlock()
		return // first sight of this incarnation: the exporter saw nothing change
	}
	var outs []Change
	switch tr.Kind {
	case lock.TransitionAcquired:
		outs = append(outs, s.acquired(tr))
	case lock.TransitionReleased:
		outs = append(outs, s.released(tr))
	}
	if p := rec.PreferredHolder(); rec.Holder != "" && p != "" && p != s.preferred {
		outs = append(outs, Change{Reason: ReasonPreferredHolderChanged, Old: s.preferred, New: p, Strategy: rec.Strategy()})
		s.preferred = p
	}
	t.mu.Unlock()
	if len(outs) > 0 {
		ref := regarding(rec)
		for _, c := range outs {
			t.send(ref, eventType(c), c)
		}
	}
}

// samePreferred reports whether rec asks for the handover prev did (or neither asks).
func samePreferred(prev, rec *lock.Lease) bool {
	return rec.PreferredHolder() == "" || rec.PreferredHolder() == prev.PreferredHolder()
}

// acquired is the LeaderChanged of a take, and moves s to the new tenure.
func (s *tracked) acquired(tr lock.Transition) Change {
	rec := tr.Rec
	c := Change{Reason: ReasonLeaderChanged, Old: s.holder, New: rec.Holder, Held: unknown, Leaderless: unknown, Ended: tr.Ending()}
	if tr.LeaderlessKnown {
		c.Leaderless = time.Duration(tr.Leaderless) * time.Microsecond
	}
	if c.Ended == lock.Released && s.handedOver {
		c.Ended = lock.HandedOver
	}
	if s.since != 0 && c.Old != "" && tr.Live { // after a relist, the tenure ended somewhere in the gap
		end := tr.At
		if c.Leaderless > 0 {
			end -= c.Leaderless.Microseconds()
		}
		c.Held = time.Duration(max(0, end-s.since)) * time.Microsecond
	}
	*s = tracked{uid: s.uid, holder: rec.Holder, since: sinceOf(rec, tr.At, tr.Live), preferred: rec.PreferredHolder()}
	return c
}

// released is the LeaseReleased of a release; s keeps the holder that released.
func (s *tracked) released(tr lock.Transition) Change {
	c := Change{Reason: ReasonLeaseReleased, Old: tr.Prev.Holder, Held: unknown, Ended: tr.Ending()}
	if s.since != 0 && tr.Live {
		c.Held = time.Duration(max(0, tr.At-s.since)) * time.Microsecond
	}
	s.holder, s.heldRenew, s.handedOver = tr.Prev.Holder, 0, tr.HandedOver
	return c
}

// Gone is informer.Observer's: last, the last record of an incarnation that went at at.
func (t *tracker) Gone(last *lock.Lease, at int64, live bool) {
	if !t.classes[last.Class] {
		return
	}
	t.mu.Lock()
	if s := t.locks[last.Ref()]; s != nil && s.uid == string(last.GetObjectMeta().GetUID()) {
		delete(t.locks, last.Ref())
	}
	t.mu.Unlock()
	c := Change{Reason: ReasonLeaseDeleted, Old: last.Holder, Still: last.Held(at)}
	t.send(regarding(last), eventType(c), c)
}

// sweep writes what happens without a write to the lock, judged at at (View.JudgedAt,
// frozen while the view is stale, so a broken watch expires nothing): a lock whose holder
// stopped renewing and nobody took over, and an expected lock that does not exist. fresh
// says the view is current; only then is a missing lock missing.
func (t *tracker) sweep(view informer.View, has func(lock.Kind, string, string) bool, at int64, fresh bool) {
	type expiry struct {
		ref *corev1.ObjectReference
		c   Change
	}
	var expired []expiry
	view.Range(func(l *lock.Lease) {
		if !t.classes[l.Class] || l.Holder == "" {
			return
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		s := t.locks[l.Ref()]
		if s == nil {
			return
		}
		if l.Held(at) {
			s.heldRenew = l.ObservedRenewTime
			return
		}
		past, ok := l.PastExpiry(at)
		if !ok || s.heldRenew == 0 || s.heldRenew != l.ObservedRenewTime || past < expiredGrace(l) {
			return
		}
		s.heldRenew = 0
		c := Change{Reason: ReasonLeaseExpired, Old: l.Holder, Held: unknown, Leaderless: time.Duration(past) * time.Microsecond, Ended: lock.Expired}
		if s.since != 0 {
			c.Held = time.Duration(max(0, at-past-s.since)) * time.Microsecond
		}
		expired = append(expired, expiry{regarding(l), c})
	})
	for _, e := range expired {
		t.send(e.ref, eventType(e.c), e.c)
	}
	if !view.HasSynced() || !fresh {
		return
	}
	for _, e := range t.expected {
		if has(e.Kind, e.Namespace, e.Name) {
			t.mu.Lock()
			delete(t.missing, e)
			t.mu.Unlock()
			continue
		}
		t.mu.Lock()
		stated := t.missing[e]
		t.mu.Unlock()
		if stated {
			continue
		}
		gv := e.Kind.GVR().GroupVersion()
		ref := &corev1.ObjectReference{APIVersion: gv.String(), Kind: e.Kind.String(), Namespace: e.Namespace, Name: e.Name}
		c := Change{Reason: ReasonExpectedLeaseMissing, Lock: e.String()}
		if t.send(ref, eventType(c), c) {
			t.mu.Lock()
			t.missing[e] = true
			t.mu.Unlock()
		}
	}
}
