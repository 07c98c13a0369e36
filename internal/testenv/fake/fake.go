// Package fake holds the in-memory stand-ins that the product's unit tests and benchmarks
// share, so each is written once: the one-Lease view the scrape-limit tests of exposition and
// cmd hold scrapes in flight with, and the real informer synced over a fake clientset that
// the scrape's benchmarks walk (cache.go). It imports informer (a view yields informer records), so informer's
// own tests cannot use it; their log sink is syncbuffer's.
package fake

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// OneLeaseView is an informer.View of one held Lease (ns/ctrl, held by pod-1 for 15 s,
// renewed at construction). Range blocks until Block is closed, so a test can hold scrapes in
// flight, and sends on Entered once per call, so it can tell when a scrape is rendering.
type OneLeaseView struct {
	Lease *lock.Lease
	// Block gates every Range call; close it to let them through.
	Block chan struct{}
	// Entered receives once per Range call, before it waits on Block (buffered: 100 calls).
	Entered chan struct{}
}

// NewOneLeaseView returns the view with Block open (not yet closed).
func NewOneLeaseView() OneLeaseView {
	holder, d := "pod-1", int32(15)
	renew := metav1.NewMicroTime(time.Now())
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ctrl"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, RenewTime: &renew}}
	return OneLeaseView{Lease: lock.Project(l), Block: make(chan struct{}), Entered: make(chan struct{}, 100)}
}

func (v OneLeaseView) HasSynced() bool                       { return true }
func (v OneLeaseView) JudgedAt(now time.Time) time.Time      { return now }
func (v OneLeaseView) WatchingCandidates() bool              { return false }
func (v OneLeaseView) RangeCandidates(func(*lock.Candidate)) {}
func (v OneLeaseView) RangeDeleted(func(*lock.Tombstone))    {}

// Has is Lookup's answer, for --expect.
func (v OneLeaseView) Has(kind lock.Kind, namespace, name string) bool {
	return v.Lookup(kind, namespace, name) != nil
}

// Lookup finds the Lease without waiting on Block: a detail page does not pass over the view.
func (v OneLeaseView) Lookup(kind lock.Kind, namespace, name string) *lock.Lease {
	if kind == v.Lease.Kind() && namespace == v.Lease.Namespace() && name == v.Lease.Name() {
		return v.Lease
	}
	return nil
}

// Snapshot and Scan make it an informer.Ordered, going through Range (and Block).
func (v OneLeaseView) Snapshot(nodes func(*lock.Lease) bool) informer.Snapshot {
	return Snapshot(v, nodes)
}
func (v OneLeaseView) Scan(fn func([]*lock.Lease)) { Scan(v, fn) }

// Range reports the Lease once Block is closed.
func (v OneLeaseView) Range(fn func(*lock.Lease)) {
	v.Entered <- struct{}{}
	<-v.Block
	fn(v.Lease)
}

var _ informer.Ordered = OneLeaseView{}
