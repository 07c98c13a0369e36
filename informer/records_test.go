package informer

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lease-exporter/lease-exporter/internal/testenv/lockobj"
	"github.com/lease-exporter/lease-exporter/lock"
)

// The records the stores' tests feed them, from the objects lock's own tests use.

var t0, rawLease = lockobj.T0, lockobj.Lease

// observeLock is the observation of a store that keeps no history.
var observeLock = lock.Observation(lock.HistoryOptions{}).Records()

// uidOf is how a record spells the UID s.
func uidOf(s string) string {
	return lock.Project(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{UID: types.UID(s)}}).UID.String()
}
