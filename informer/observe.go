package informer

import (
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/tools/cache"
)

// observer is the informer's transform. It projects each Lease to a compact record and
// carries forward what the exporter observed about it (holder changes, when renewTime last
// changed) from the previous record of the same Lease.
//
// The transform runs when an event is queued, before the store is updated, and events for one
// Lease may queue faster than the store catches up. So "previous" must be the last record this
// transform produced, not the one in the store: pending holds those records until the event
// handler reports that the store has them, after which the store is the authority again. Keeping
// observed state inside the records (instead of a second map) keeps memory per Lease small.
type observer struct {
	now   func() time.Time
	store cache.Store

	mu      sync.Mutex
	pending map[string]*Lease
}

func newObserver(now func() time.Time) *observer {
	return &observer{now: now, pending: make(map[string]*Lease)}
}

// transform is a cache.TransformFunc. It must be idempotent: with streaming lists client-go
// passes already transformed records through it again.
func (o *observer) transform(obj any) (any, error) {
	if l, ok := obj.(*coordinationv1.Lease); ok {
		return o.observe(Project(l)), nil
	}
	// Already a record, or a tombstone whose object was transformed when it was added.
	return obj, nil
}

func (o *observer) observe(l *Lease) *Lease {
	key := l.key
	o.mu.Lock()
	defer o.mu.Unlock()
	prev := o.pending[key]
	if prev == nil && o.store != nil {
		if obj, ok, _ := o.store.GetByKey(key); ok {
			prev, _ = obj.(*Lease)
		}
	}
	if prev != nil && prev.UID == l.UID && l.ResourceVersion() != "" && prev.ResourceVersion() == l.ResourceVersion() {
		// A relist returned an unchanged object: keep the cached record (and its memory).
		return prev
	}
	now := o.now().UnixMicro()
	if prev == nil || prev.UID != l.UID {
		// First sight of this incarnation. Start the observed renew time from the reported
		// one, capped at our clock, so a Lease stale before we started does not look fresh.
		l.FirstSeen = now
		if l.HasRenewTime {
			l.ObservedRenewTime = min(l.RenewTime, now)
		}
	} else {
		l.FirstSeen = prev.FirstSeen
		l.ObservedHolderChanges = prev.ObservedHolderChanges
		if l.Holder != prev.Holder {
			l.ObservedHolderChanges++
		}
		l.ObservedRenewTime = prev.ObservedRenewTime
		if l.HasRenewTime != prev.HasRenewTime || l.RenewTime != prev.RenewTime {
			l.ObservedRenewTime = now
		}
	}
	o.pending[key] = l
	return l
}

// settled is called by the informer's event handler once the store holds obj: from then on
// the store is the authority for that Lease, unless a later record is already pending.
func (o *observer) settled(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	l, ok := obj.(*Lease)
	if !ok {
		return
	}
	o.mu.Lock()
	if o.pending[l.key] == l {
		delete(o.pending, l.key)
		if len(o.pending) == 0 {
			// Go maps never shrink: after the initial list filled it with every Lease, an
			// emptied map would keep ~20 B per Lease for good.
			o.pending = make(map[string]*Lease)
		}
	}
	o.mu.Unlock()
}

// handler returns the event handler that keeps pending small.
func (o *observer) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.settled(obj) },
		UpdateFunc: func(_, obj any) { o.settled(obj) },
		DeleteFunc: o.settled,
	}
}
