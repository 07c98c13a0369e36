// Package election runs real leader-election candidates, for the integration tests and the
// demo: client-go's tools/leaderelection, the code path a controller uses, on a Lease or on
// the old ConfigMap/Endpoints annotation locks, optionally with a skewed clock; and the Python
// client's LeaderElection (kubernetes.leaderelection) as a separate process, on its
// ConfigMapLock or a Lease, optionally under libfaketime.
package election

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Timings are a candidate's leader-election timings.
type Timings struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Fast are short timings for tests and the demo: failover within a few seconds.
var Fast = Timings{LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: time.Second}

// Candidate is one participant in an election for namespace/name.
type Candidate struct {
	Identity string
	cancel   context.CancelFunc
	done     chan struct{}
	// term is the context of the current leadership term, which client-go cancels when the
	// term ends (leadership lost, or Stop). Leading reads it rather than a flag set by the
	// callbacks: client-go runs OnStartedLeading in its own goroutine, which may run after
	// OnStoppedLeading or after Stop and would leave a stale "leading" flag behind.
	term atomic.Pointer[context.Context]
}

// Start runs a candidate on a Lease until Stop. With release, stopping gives the Lease up
// (ReleaseOnCancel); without, stopping just stops renewing, as a crashed process would.
func Start(ctx context.Context, client kubernetes.Interface, namespace, name, identity string, t Timings, release bool) (*Candidate, error) {
	return StartConfig(ctx, client, Config{Namespace: namespace, Name: name, Identity: identity, Timings: t, Release: release})
}

// Config is a candidate's whole configuration.
type Config struct {
	Namespace, Name, Identity string
	Timings                   Timings
	// Release gives the lock up on Stop (ReleaseOnCancel).
	Release bool
	// Kind is the locked object; "" is a Lease.
	Kind LockKind
	// Skew sets the candidate's clock ahead (or behind, negative) of the real one: the times
	// it writes are shifted by it.
	Skew time.Duration
}

// StartConfig runs a candidate until Stop.
func StartConfig(ctx context.Context, client kubernetes.Interface, cfg Config) (*Candidate, error) {
	namespace, name, identity, t := cfg.Namespace, cfg.Name, cfg.Identity, cfg.Timings
	meta := metav1.ObjectMeta{Namespace: namespace, Name: name}
	lockConfig := resourcelock.ResourceLockConfig{Identity: identity}
	var lock resourcelock.Interface
	switch cfg.Kind {
	case "", LockLease:
		lock = &resourcelock.LeaseLock{LeaseMeta: meta, Client: client.CoordinationV1(), LockConfig: lockConfig}
	case LockConfigMap, LockEndpoints:
		lock = &AnnotationLock{Kind: cfg.Kind, Meta: meta, Client: client.CoreV1(), LockConfig: lockConfig}
	default:
		return nil, fmt.Errorf("candidate %s: unknown lock kind %q", identity, cfg.Kind)
	}
	if cfg.Skew != 0 {
		lock = skewedLock{Interface: lock, skew: cfg.Skew}
	}
	c := &Candidate{Identity: identity, done: make(chan struct{})}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   t.LeaseDuration,
		RenewDeadline:   t.RenewDeadline,
		RetryPeriod:     t.RetryPeriod,
		ReleaseOnCancel: cfg.Release,
		Name:            namespace + "/" + name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { c.term.Store(&ctx) },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("candidate %s for %s/%s: %w", identity, namespace, name, err)
	}
	ctx, c.cancel = context.WithCancel(ctx)
	go func() {
		defer close(c.done)
		// Run returns when leadership is lost or ctx ends; a real controller would exit,
		// a candidate in a pool keeps trying until stopped.
		for ctx.Err() == nil {
			le.Run(ctx)
		}
	}()
	return c, nil
}

// Leading reports whether this candidate currently believes it leads.
func (c *Candidate) Leading() bool {
	t := c.term.Load()
	return t != nil && (*t).Err() == nil
}

// Stop ends the candidate and waits for it; with release set at Start it gives the Lease up.
func (c *Candidate) Stop() {
	c.cancel()
	<-c.done
}

// Pool is a set of candidates for one Lease.
type Pool struct {
	Namespace, Name string
	mu              sync.Mutex
	Candidates      []*Candidate
}

// StartPool starts n candidates named <prefix>-<i>.
func StartPool(ctx context.Context, client kubernetes.Interface, namespace, name, prefix string, n int, t Timings, release bool) (*Pool, error) {
	p := &Pool{Namespace: namespace, Name: name}
	for i := range n {
		c, err := Start(ctx, client, namespace, name, fmt.Sprintf("%s-%d", prefix, i), t, release)
		if err != nil {
			p.StopAll()
			return nil, err
		}
		p.Candidates = append(p.Candidates, c)
	}
	return p, nil
}

// Leader returns the candidate that believes it leads, or nil.
func (p *Pool) Leader() *Candidate {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.Candidates {
		if c.Leading() {
			return c
		}
	}
	return nil
}

// Remove stops c and drops it from the pool.
func (p *Pool) Remove(c *Candidate) {
	c.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.Candidates {
		if x == c {
			p.Candidates = append(p.Candidates[:i], p.Candidates[i+1:]...)
			return
		}
	}
}

// Add adds a started candidate to the pool.
func (p *Pool) Add(c *Candidate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Candidates = append(p.Candidates, c)
}

// StopAll stops every candidate.
func (p *Pool) StopAll() {
	p.mu.Lock()
	cs := p.Candidates
	p.Candidates = nil
	p.mu.Unlock()
	for _, c := range cs {
		c.Stop()
	}
}
