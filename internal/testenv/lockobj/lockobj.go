// Package lockobj holds the API objects of locks that the unit tests of informer and
// lock both feed their code: those packages' internal tests cannot import each other,
// and this package imports neither.
package lockobj

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
)

// T0 is the tests' reference time.
var T0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// Lease is the Lease "ns/l" held by holder, renewed at renew, lasting 15 s, with metadata
// the exporter drops (managed fields, labels).
func Lease(uid, rv, holder string, renew time.Time) *coordinationv1.Lease {
	r := metav1.NewMicroTime(renew)
	d := int32(15)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "l", UID: types.UID(uid), ResourceVersion: rv,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}, Labels: map[string]string{"a": "b"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &r, LeaseDurationSeconds: &d},
	}
}

// AnnotationLock is the metadata of a ConfigMap or Endpoints lock whose leader annotation is
// record; record "-" means no annotation.
func AnnotationLock(ns, name, uid, rv, record string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), ResourceVersion: rv,
			CreationTimestamp: metav1.NewTime(T0.Add(-time.Hour)),
			Labels:            map[string]string{"app": "x"},
			Annotations:       map[string]string{"other": "kept out of the record"}},
	}
	if record != "-" {
		m.Annotations[leaderrecord.Annotation] = record
	}
	return m
}

// The leader records client-go and the Python client write.
const (
	ClientGoRecord = `{"holderIdentity":"pod-a_1","leaseDurationSeconds":15,"acquireTime":"2026-11-21T11:59:00Z",` +
		`"renewTime":"2026-11-21T12:00:00.5Z","leaderTransitions":3}`
	PythonRecord = `{"holderIdentity": "py-1", "leaseDurationSeconds": "15", "acquireTime": "2026-11-21 11:59:00", ` +
		`"renewTime": "2026-11-21 12:00:00.500000"}`
)
