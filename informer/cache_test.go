package informer

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/lock"
)

// TestHasFindsALockByKindNamespaceAndName: Has answers from the stores of every kind, tells
// a ConfigMap lock from a Lease of the same name, and follows creations and deletions.
func TestHasFindsALockByKindNamespaceAndName(t *testing.T) {
	f := newAnnotationFixture(t, Options{}, map[annotationSource][]*metav1.PartialObjectMetadata{
		configMapSource: {lockMeta("a", "py", "u1", "1", pythonRecord)},
	})
	for _, c := range []struct {
		kind      lock.Kind
		ns, name  string
		wantFound bool
	}{
		{lock.KindConfigMap, "a", "py", true},
		{lock.KindLease, "a", "py", false},
		{lock.KindEndpoints, "a", "py", false},
		{lock.KindConfigMap, "b", "py", false},
		{lock.KindConfigMap, "a", "p", false},
	} {
		if got := f.leases.Has(c.kind, c.ns, c.name); got != c.wantFound {
			t.Errorf("Has(%s, %s/%s) = %v, want %v", c.kind, c.ns, c.name, got, c.wantFound)
		}
	}
	leases := f.typed.CoordinationV1().Leases("a")
	if _, err := leases.Create(context.Background(), rawLeaseIn("a", "py"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitFor(t, "the Lease a/py found", func() bool { return f.leases.Has(lock.KindLease, "a", "py") })
	if err := leases.Delete(context.Background(), "py", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitFor(t, "the deleted Lease a/py gone", func() bool { return !f.leases.Has(lock.KindLease, "a", "py") })
	if !f.leases.Has(lock.KindConfigMap, "a", "py") {
		t.Error("deleting the Lease a/py lost the ConfigMap lock a/py")
	}
}
