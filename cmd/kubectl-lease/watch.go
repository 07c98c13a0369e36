package main

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/lease-exporter/lease-exporter/lock"
)

// -w goes on from the list as the exporter does: it watches every kind from its list's
// resource version and observes each change live (lock.Observation, live), so a lock is
// judged by when its record was seen to change, never by the holder's clock, and the
// holder's skew is measured on the renewals it sees. It prints a row when a lock's holder,
// standing or skew judgement changes, not on every renewal; a tick re-judges every lock four times a
// second, since a lock expires without any write.

// change is one watched change of a lock, or the end of a relist.
type change struct {
	kind lock.Kind
	rec  *lock.Lease // nil for relistDone
	// deleted: the object went, or stopped being a lock (its annotation removed).
	deleted bool
	key     lock.Ref
	live    bool
	// relisted is set on relistDone: the keys of kind the relist returned.
	relisted map[lock.Ref]bool
	err      error
}

// shownState is what a printed row said, so only a change prints another.
type shownState struct {
	holder, standing string
	skewed, measured bool
}

// rejudgeEvery is how often -w judges every lock again: often enough to show a lock expired
// in the moment before a successor, polling every second, takes it; a pass over 100k locks
// takes milliseconds.
const rejudgeEvery = 250 * time.Millisecond

// maxWatchBackoff bounds the wait before a failed watch is reopened.
const maxWatchBackoff = 30 * time.Second

func watchLocks(ctx context.Context, o *options, out *listOutput, src *source, ns string, versions map[lock.Kind]string) error {
	changes := make(chan change)
	for k, rv := range versions {
		go src.watchKind(ctx, k, ns, o.selector, rv, changes)
	}
	seen, shown := out.seen, out.shown
	tick := time.NewTicker(rejudgeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case c := <-changes:
			if c.err != nil {
				if ctx.Err() != nil {
					return nil // interrupted while a watch was reopening
				}
				return c.err
			}
			at, _, _ := src.clock.now()
			if err := out.apply(c, at, shown); err != nil {
				return err
			}
		case <-tick.C:
			at, _, _ := src.clock.now()
			for key, rec := range seen {
				if err := out.show(key, rec, at, shown, false); err != nil {
					return err
				}
			}
		}
	}
}

// apply observes c and prints the row it changes.
func (p *listOutput) apply(c change, at time.Time, shown map[lock.Ref]shownState) error {
	switch {
	case c.relisted != nil:
		for key, rec := range p.seen {
			if key.Kind == c.kind && !c.relisted[key] {
				delete(p.seen, key)
				if err := p.show(key, rec, at, shown, true); err != nil {
					return err
				}
			}
		}
		return nil
	case c.deleted:
		rec, ok := p.seen[c.key]
		if !ok {
			return nil
		}
		delete(p.seen, c.key)
		return p.show(c.key, rec, at, shown, true)
	}
	if !p.listed(c.rec) {
		return nil
	}
	rec := observe(p.seen[c.key], c.rec, at.UnixMicro(), c.live)
	p.seen[c.key] = rec
	return p.show(c.key, rec, at, shown, false)
}

// listed says whether the list shows rec as a row (not filtered out by --class, nor summed up).
func (p *listOutput) listed(rec *lock.Lease) bool {
	return (p.filter == nil || rec.Class == *p.filter) && (p.summed == nil || rec.Class != *p.summed)
}

// show prints rec's row, judged at at, if it says something the last row of it did not.
func (p *listOutput) show(key lock.Ref, rec *lock.Lease, at time.Time, shown map[lock.Ref]shownState, deleted bool) error {
	if !p.listed(rec) {
		return nil
	}
	j := judge(rec, at)
	st := stateOf(j, rec)
	if deleted {
		j.Standing, st.standing = "deleted", "deleted"
		delete(shown, key)
	} else {
		if prev, ok := shown[key]; ok && prev == st {
			return nil
		}
		shown[key] = st
	}
	return p.table.print([][]any{cells(&j, at, p.o.allNamespaces, true)})
}

func stateOf(j judged, rec *lock.Lease) shownState {
	_, measured := rec.ClockSkew()
	return shownState{holder: j.Holder, standing: j.Standing, skewed: j.skewed(), measured: measured}
}

// watchKind watches the locks of kind k from resource version rv and sends their changes,
// relisting (not live) when the watch expires; it returns when ctx ends or sends an error.
func (s *source) watchKind(ctx context.Context, k lock.Kind, ns, selector, rv string, out chan<- change) {
	send := func(c change) bool {
		select {
		case out <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	backoff := time.Second
	pause := func() bool { // a watch that keeps failing is not reopened in a hot loop
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
			backoff = min(2*backoff, maxWatchBackoff)
			return true
		}
	}
	for ctx.Err() == nil {
		opts := metav1.ListOptions{LabelSelector: selector, ResourceVersion: rv, AllowWatchBookmarks: true}
		w, err := s.watch(ctx, k, ns, opts)
		switch {
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			send(change{err: lockError("watch", k, ns, "", err)})
			return
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			rv = "" // too old to resume: relist below
		case err != nil:
			// The API server restarting, a network blip: try again, as the exporter does.
			if !pause() {
				return
			}
			continue
		default:
			started := time.Now()
			rv = s.drain(ctx, k, w, rv, send)
			w.Stop()
			if time.Since(started) > time.Minute {
				backoff = time.Second // it served a while: the server ended it, nothing failed
			}
			if !pause() {
				return
			}
		}
		if rv == "" { // expired: relist, then watch from the list
			relisted := map[lock.Ref]bool{}
			newRV, err := s.list(ctx, k, ns, selector, func(locks []*lock.Lease) error {
				for _, l := range locks {
					relisted[l.Ref()] = true
					if !send(change{kind: k, rec: l, key: l.Ref()}) {
						return ctx.Err()
					}
				}
				return nil
			})
			var ae *apiError
			switch {
			case err != nil && errors.As(err, &ae) && (apierrors.IsForbidden(ae.err) || apierrors.IsUnauthorized(ae.err)):
				send(change{err: err})
				return
			case err != nil:
				if !pause() {
					return
				}
				continue // rv is still "": relist again
			}
			if !send(change{kind: k, relisted: relisted}) {
				return
			}
			rv = newRV
		}
	}
}

// drain sends w's events until it ends, and returns the resource version to watch on from,
// "" when the watch expired (410 Gone) and a relist is due.
func (s *source) drain(ctx context.Context, k lock.Kind, w watch.Interface, rv string, send func(change) bool) string {
	for {
		select {
		case <-ctx.Done():
			return rv
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv
			}
			if ev.Type == watch.Error {
				if apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) || apierrors.IsGone(apierrors.FromObject(ev.Object)) {
					return ""
				}
				return rv
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			rv = m.GetResourceVersion()
			if ev.Type == watch.Bookmark {
				continue
			}
			key := lock.Ref{Kind: k, Namespace: m.GetNamespace(), Name: m.GetName()}
			l, isLock := project(k, ev.Object)
			if ev.Type == watch.Deleted || !isLock {
				if !send(change{kind: k, key: key, deleted: true}) {
					return rv
				}
				continue
			}
			if !send(change{kind: k, rec: l, key: key, live: true}) {
				return rv
			}
		}
	}
}

func (s *source) watch(ctx context.Context, k lock.Kind, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	if !k.Annotation() {
		return s.client.CoordinationV1().Leases(ns).Watch(ctx, opts)
	}
	return s.meta.Resource(k.GVR()).Namespace(ns).Watch(ctx, opts)
}

// project decodes a watched object of kind k into a lock record; false when it is no lock.
func project(k lock.Kind, obj any) (*lock.Lease, bool) {
	switch o := obj.(type) {
	case *coordinationv1.Lease:
		return lock.Project(o), true
	case *metav1.PartialObjectMetadata:
		return lock.ProjectAnnotationLock(&o.ObjectMeta, k)
	}
	return nil, false
}
