package informer

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func rawLease(uid, rv, holder string, renew time.Time) *coordinationv1.Lease {
	r := metav1.NewMicroTime(renew)
	d := int32(15)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "l", UID: types.UID(uid), ResourceVersion: rv,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}, Labels: map[string]string{"a": "b"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &r, LeaseDurationSeconds: &d},
	}
}

// newTestObserver returns an observer over an empty store and a clock that advances a second per call.
func newTestObserver() (*observer, cache.Store) {
	now := t0
	o := newObserver(func() time.Time { now = now.Add(time.Second); return now })
	o.store = cache.NewStore(cache.MetaNamespaceKeyFunc)
	return o, o.store
}

func mustTransform(t *testing.T, o *observer, obj any) *Lease {
	t.Helper()
	out, err := o.transform(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*Lease)
}

// TestObserveWhileStoreLags feeds several events for one Lease before the store has any of
// them, as happens when events queue faster than the informer processes them.
func TestObserveWhileStoreLags(t *testing.T) {
	o, store := newTestObserver()
	a := mustTransform(t, o, rawLease("u1", "1", "a", t0))
	b := mustTransform(t, o, rawLease("u1", "2", "b", t0.Add(time.Second)))
	c := mustTransform(t, o, rawLease("u1", "3", "b", t0.Add(2*time.Second)))
	if a.ObservedHolderChanges != 0 || b.ObservedHolderChanges != 1 || c.ObservedHolderChanges != 1 {
		t.Fatalf("holder changes a=%d b=%d c=%d, want 0 1 1", a.ObservedHolderChanges, b.ObservedHolderChanges, c.ObservedHolderChanges)
	}
	if b.FirstSeen != a.FirstSeen || c.FirstSeen != a.FirstSeen {
		t.Fatal("first-seen time not carried over")
	}
	if c.ObservedRenewTime <= b.ObservedRenewTime {
		t.Fatalf("observed renew time did not advance on a renewal: b=%d c=%d", b.ObservedRenewTime, c.ObservedRenewTime)
	}
	// The store catches up with a; settling a must not forget the later pending record c.
	_ = store.Add(a)
	o.settled(a)
	d := mustTransform(t, o, rawLease("u1", "4", "a", t0.Add(3*time.Second)))
	if d.ObservedHolderChanges != 2 {
		t.Fatalf("holder changes after settle = %d, want 2 (compared with c, not the stored a)", d.ObservedHolderChanges)
	}
	_ = store.Update(d)
	o.settled(d)
	if len(o.pending) != 0 {
		t.Fatalf("pending not drained: %v", o.pending)
	}
}

func TestObserveRecreationAndRelist(t *testing.T) {
	o, store := newTestObserver()
	a := mustTransform(t, o, rawLease("u1", "1", "a", t0))
	_ = store.Add(a)
	o.settled(a)
	b := mustTransform(t, o, rawLease("u1", "2", "b", t0))
	_ = store.Update(b)
	o.settled(b)
	if b.ObservedRenewTime != a.ObservedRenewTime {
		t.Fatal("observed renew time changed although renewTime did not")
	}

	// A relist returning the same resource version keeps the cached record itself.
	if again := mustTransform(t, o, rawLease("u1", "2", "b", t0)); again != b {
		t.Fatal("unchanged object produced a new record")
	}
	// Transforming a record again (streaming lists do) is a no-op.
	if again := mustTransform(t, o, b); again != b {
		t.Fatal("transform is not idempotent")
	}
	// A new incarnation (different UID) starts counting afresh.
	c := mustTransform(t, o, rawLease("u2", "9", "c", t0))
	if c.ObservedHolderChanges != 0 || c.FirstSeen == b.FirstSeen {
		t.Fatalf("recreated lease inherited state: changes=%d", c.ObservedHolderChanges)
	}
	// A tombstone passes through untouched.
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/l", Obj: b}
	if out, _ := o.transform(tomb); out != tomb {
		t.Fatal("tombstone was transformed")
	}
}

func TestProjectDropsUnusedMetadata(t *testing.T) {
	raw := rawLease("u1", "1", "a", t0)
	l := Project(raw)
	if l.Namespace() != "ns" || l.Name() != "l" || l.Holder != "a" || !l.HasRenewTime || l.RenewTime != t0.UnixMicro() ||
		!l.HasDuration || l.DurationSeconds != 15 || l.HasTransitions || l.HasAcquireTime {
		t.Fatalf("bad projection: %+v", l)
	}
	meta := l.GetObjectMeta()
	if meta.GetResourceVersion() != "1" || meta.GetUID() != types.UID(parseUID("u1").String()) || meta.GetName() != "ns/l" || len(meta.GetManagedFields()) != 0 || len(meta.GetLabels()) != 0 {
		t.Fatalf("metadata kept more than the key and versions: %+v", meta)
	}
	if key, _ := cache.MetaNamespaceKeyFunc(l); key != "ns/l" {
		t.Fatalf("store key %q", key)
	}
}

func TestExpiry(t *testing.T) {
	l := Project(rawLease("u", "1", "a", t0))
	for _, tc := range []struct {
		at   time.Time
		held bool
	}{
		{t0, true}, {t0.Add(15 * time.Second), true}, {t0.Add(15*time.Second + time.Microsecond), false},
	} {
		if got := l.Held(tc.at.UnixMicro()); got != tc.held {
			t.Errorf("Held at %v = %v, want %v", tc.at.Sub(t0), got, tc.held)
		}
	}
	l.Holder = ""
	if l.Held(t0.UnixMicro()) {
		t.Error("a Lease without holder is held")
	}
}

func TestUIDRoundTrip(t *testing.T) {
	const id = "0b5e8a52-4c0e-4f7e-9a55-000000000042"
	if got := parseUID(id).String(); got != id {
		t.Fatalf("parseUID(%s).String() = %s", id, got)
	}
	if parseUID("a") == parseUID("b") {
		t.Fatal("distinct non-UUID UIDs collide")
	}
}

func TestProjectPacksRareFields(t *testing.T) {
	raw := rawLease("u1", "123", "l", t0) // holder equals the name, as for kubelets
	if l := Project(raw); l.ResourceVersion() != "123" || l.Strategy() != "" || l.rare != nil || l.Holder != "l" {
		t.Fatalf("common Lease: rv=%q rare=%v holder=%q", l.ResourceVersion(), l.rare, l.Holder)
	}
	raw.ResourceVersion = "opaque-rv"
	s, p := coordinationv1.OldestEmulationVersion, "b"
	raw.Spec.Strategy, raw.Spec.PreferredHolder = &s, &p
	l := Project(raw)
	if l.ResourceVersion() != "opaque-rv" || l.Strategy() != "OldestEmulationVersion" || l.PreferredHolder() != "b" {
		t.Fatalf("rare fields lost: rv=%q strategy=%q preferred=%q", l.ResourceVersion(), l.Strategy(), l.PreferredHolder())
	}
}
