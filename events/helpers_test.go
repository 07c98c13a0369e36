package events

import (
	"fmt"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lease-exporter/lease-exporter/lock"
)

var t0 = time.Date(2026, 11, 28, 3, 12, 0, 0, time.UTC)

// sent is one Event the tracker asked to send.
type sent struct {
	ref *corev1.ObjectReference
	typ string
	c   Change
}

// recorder collects what a tracker sends.
type recorder struct {
	mu        sync.Mutex
	sent      []sent
	notWriter bool // send as a replica that is not the writer
}

func (r *recorder) send(ref *corev1.ObjectReference, typ string, c Change) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.notWriter {
		return false
	}
	r.sent = append(r.sent, sent{ref, typ, c})
	return true
}

func (r *recorder) take() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// lockFeed plays one lock's records through the observation the informer runs (with a
// history, as the leader-election class keeps by default) and through an observer.
type lockFeed struct {
	t         *testing.T
	ns        string
	name      string
	uid       string
	rv        int
	dur       int32
	observe   lock.Observe
	prev      *lock.Lease
	obs       interface{ Observed(lock.Transition) }
	preferred string
}

func newFeed(t *testing.T, ns, name string, obs interface{ Observed(lock.Transition) }) *lockFeed {
	return &lockFeed{t: t, ns: ns, name: name, uid: "0b7d2a8e-4c1f-4d2a-9e3b-1a2b3c4d5e6f", dur: 15,
		observe: lock.Observation(lock.DefaultHistory), obs: obs}
}

// see observes holder's record written at at (its renewTime), seen at at.
func (f *lockFeed) see(holder string, at time.Duration, live bool) *lock.Lease {
	f.rv++
	renew := metav1.NewMicroTime(t0.Add(at))
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.name, UID: types.UID(f.uid), ResourceVersion: fmt.Sprint(f.rv)},
		Spec: coordinationv1.LeaseSpec{RenewTime: &renew, LeaseDurationSeconds: &f.dur}}
	if holder != "" {
		l.Spec.HolderIdentity = &holder
		acquire := renew
		if f.prev != nil && f.prev.Holder == holder && f.prev.HasAcquireTime {
			acquire = metav1.NewMicroTime(time.UnixMicro(f.prev.AcquireTime))
		}
		l.Spec.AcquireTime = &acquire
	}
	if f.preferred != "" {
		l.Spec.PreferredHolder = &f.preferred
		s := coordinationv1.OldestEmulationVersion
		l.Spec.Strategy = &s
	}
	now := t0.Add(at).UnixMicro()
	tr := f.observe(f.prev, lock.Project(l), now, live)
	f.obs.Observed(tr)
	f.prev = tr.Rec
	return tr.Rec
}

// view is a hand-built informer.View over records, for the sweep's unit tests.
type view struct {
	recs     []*lock.Lease
	staleAt  time.Time // zero: current
	synced   bool
	existing map[string]bool
}

func (v *view) HasSynced() bool { return v.synced }
func (v *view) Range(fn func(*lock.Lease)) {
	for _, l := range v.recs {
		fn(l)
	}
}

func (v *view) JudgedAt(now time.Time) time.Time {
	if v.staleAt.IsZero() {
		return now
	}
	return v.staleAt
}

func (v *view) Has(kind lock.Kind, namespace, name string) bool {
	return v.existing[kind.String()+"/"+namespace+"/"+name]
}

// anyLock is a Known for tests about other things than which locks the rebuild may trust.
func anyLock(*corev1.ObjectReference) bool { return true }
