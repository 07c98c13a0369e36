package reliability_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// numLeases is the size of the load namespace: a large cluster's node heartbeats plus its
// controllers' elections.
const numLeases = 10000

var (
	manyOnce sync.Once
	manyErr  error
)

// manyLeases creates numLeases Leases in namespace "load" once per package run, shared by the
// load and shutdown tests, and returns the namespace.
func manyLeases(t *testing.T) string {
	t.Helper()
	const ns = "load"
	manyOnce.Do(func() {
		start := time.Now()
		manyErr = createMany(ns)
		t.Logf("created %d Leases in %.1fs", numLeases, time.Since(start).Seconds())
	})
	if manyErr != nil {
		t.Fatal(manyErr)
	}
	return ns
}

// createMany creates the namespace and its Leases with a few concurrent writers: one writer
// would wait on etcd's fsync for every object.
func createMany(ns string) error {
	ctx := context.Background()
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, namespaceObject(ns), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	const writers = 16
	jobs := make(chan int)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if _, err := env.Client.CoordinationV1().Leases(ns).Create(ctx, bulkLease(ns, i), metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create lease %d: %w", i, err)
					return
				}
			}
		}()
	}
	var err error
feed:
	for i := range numLeases {
		select {
		case jobs <- i:
		case err = <-errs:
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err == nil && len(errs) > 0 {
		err = <-errs
	}
	return err
}

// bulkLease is a realistic Lease: a holder that looks like a pod, renewed now, with one in ten
// released (no holder) so both lease_held values appear.
func bulkLease(ns string, i int) *coordinationv1.Lease {
	now := metav1.NewMicroTime(time.Now())
	holder := fmt.Sprintf("controller-%05d-7c9f8d6b5-x2x4z_0f6e3a52-5d1c-4c3e-9a57-%012d", i, i)
	if i%10 == 0 {
		holder = ""
	}
	duration, transitions := int32(3600), int32(i%7)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("lease-%05d", i)},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration,
			AcquireTime: &now, RenewTime: &now, LeaseTransitions: &transitions},
	}
}
