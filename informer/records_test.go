package informer

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// The records the stores' tests feed them, as lock's own tests build them (the same
// fixtures: those tests are package lock's, which this package's tests cannot import).

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

// observeLock is the observation of a store that keeps no history.
var observeLock = lock.Observation(lock.HistoryOptions{})

// uidOf is how a record spells the UID s.
func uidOf(s string) string {
	return lock.Project(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{UID: types.UID(s)}}).UID.String()
}
