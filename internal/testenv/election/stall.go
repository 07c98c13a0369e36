package election

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
)

// StalledLeader is a client-go elector on a Lease, with ReleaseOnCancel, whose renewal can be
// frozen mid-request past its renew deadline: a GC pause or a frozen VM caught in a renewal.
// When it resumes it steps down, and its release empties the Lease a successor took
// meanwhile: client-go's release() reads the Lease but judges leadership by its own stale
// record.
type StalledLeader struct {
	lock   *stallingLock
	leases coordinationv1.LeaseInterface
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// StartStalledLeader runs identity's elector on namespace/name with timings t.
func StartStalledLeader(ctx context.Context, client kubernetes.Interface, namespace, name, identity string, t Timings) (*StalledLeader, error) {
	lock := &stallingLock{
		Interface: &resourcelock.LeaseLock{
			LeaseMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Client: client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
		},
		stalled: make(chan struct{}), resume: make(chan struct{}),
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: namespace + "/" + name, ReleaseOnCancel: true, LeaseDuration: t.LeaseDuration,
		RenewDeadline: t.RenewDeadline, RetryPeriod: t.RetryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	})
	if err != nil {
		return nil, fmt.Errorf("stalled leader %s for %s/%s: %w", identity, namespace, name, err)
	}
	s := &StalledLeader{lock: lock, leases: client.CoordinationV1().Leases(namespace), name: name, done: make(chan struct{})}
	ctx, s.cancel = context.WithCancel(ctx)
	go func() { defer close(s.done); le.Run(ctx) }()
	return s, nil
}

// Stall freezes the next renewal and waits until it is frozen.
func (s *StalledLeader) Stall(timeout time.Duration) error {
	s.lock.armed.Store(true)
	select {
	case <-s.lock.stalled:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("the leader made no renewal within %s", timeout)
	}
}

// Resume lets the frozen renewal go on and waits until the leader has stepped down, which
// releases the Lease.
//
// If a successor holds the Lease, Resume first waits for one of its renewals and resumes
// right after it. The release reads the Lease and then writes it; a successor's write in
// between makes the write conflict, and client-go does not retry it. A client-go leader
// renews once at once after acquiring, so resuming the moment the successor leads raced that
// renewal (and lost it in CI at 298716d); right after a renewal the next is a RetryPeriod
// away.
func (s *StalledLeader) Resume(timeout time.Duration) error {
	end := time.Now().Add(timeout)
	if err := s.afterSuccessorsRenewal(end); err != nil {
		return err
	}
	s.once.Do(func() { close(s.lock.resume) })
	select {
	case <-s.done:
		return nil
	case <-time.After(time.Until(end)):
		return fmt.Errorf("the stalled leader did not step down within %s of resuming", timeout)
	}
}

// afterSuccessorsRenewal returns once the Lease's holder, if it is not this leader, has
// renewed since it acquired. It reads through its own client: the lock's Get would refresh
// the resourceVersion the frozen renewal writes with.
func (s *StalledLeader) afterSuccessorsRenewal(end time.Time) error {
	var seen string
	for {
		l, err := s.leases.Get(context.Background(), s.name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading the Lease before resuming: %w", err)
		}
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		if holder == "" || holder == s.lock.Identity() {
			return nil
		}
		if seen != "" && l.ResourceVersion != seen && ptr.Deref(l.Spec.RenewTime, metav1.MicroTime{}) != ptr.Deref(l.Spec.AcquireTime, metav1.MicroTime{}) {
			return nil
		}
		if seen == "" {
			seen = l.ResourceVersion
		}
		if time.Now().After(end) {
			return fmt.Errorf("the successor %s did not renew the Lease before the deadline", holder)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop ends the elector, resuming a frozen renewal, and waits for it.
func (s *StalledLeader) Stop() {
	s.cancel()
	s.once.Do(func() { close(s.lock.resume) })
	<-s.done
}

// stallingLock is a Lease lock whose first Update after armed is set blocks until resume,
// then goes on with its context, long past its deadline: a renewal frozen mid-request.
type stallingLock struct {
	resourcelock.Interface
	armed           atomic.Bool
	stalled, resume chan struct{}
}

func (l *stallingLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	if l.armed.CompareAndSwap(true, false) {
		close(l.stalled)
		<-l.resume
	}
	return l.Interface.Update(ctx, r)
}
