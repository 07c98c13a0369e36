package events

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
)

// The per-lock budget inside the writer's token bucket: each lock may spend lockBurst
// Events at once and one more per lockRefill. A healthy lock changes hands a few times a day
// and a control-plane upgrade moves it once or twice, so 5 covers any honest burst; a lock
// that keeps changing hands beyond one a minute is flapping, and its next Event says little
// its last did not. Without it one flapping lock empties the shared bucket and every other
// lock's Events are dropped with it.
const (
	lockBurst  = 5
	lockRefill = time.Minute
)

// budget decides whether one Event may be written now: its namespace not paused, its lock's
// own budget and then the shared token bucket not empty. Only what is spent is remembered,
// and a lock's budget once full again is forgotten (forget), so memory is bounded by the
// locks that wrote in the last lockBurst × lockRefill, whether deleted or not.
type budget struct {
	global flowcontrol.RateLimiter

	mu     sync.Mutex
	locks  map[string]spent
	paused map[string]pause // by namespace
}

// spent is a lock's budget: tokens left at when.
type spent struct {
	tokens float64
	at     time.Time
}

// pause is a namespace's refusal: nothing is asked there before until, and what is not asked
// is dropped with cause.
type pause struct {
	until time.Time
	cause string
}

func newBudget(qps float64, burst int) *budget {
	return &budget{global: flowcontrol.NewTokenBucketRateLimiter(float32(qps), burst),
		locks: map[string]spent{}, paused: map[string]pause{}}
}

func budgetKey(ref *corev1.ObjectReference) string {
	return ref.Kind + "/" + ref.Namespace + "/" + ref.Name
}

// left is the lock's tokens at now, refilled since.
func (s spent) left(now time.Time) float64 {
	return min(lockBurst, s.tokens+float64(now.Sub(s.at))/float64(lockRefill))
}

// take takes a token for an Event regarding ref and returns "", or the cause it is dropped
// for. A lock out of budget takes nothing from the shared bucket.
func (b *budget) take(ref *corev1.ObjectReference, now time.Time) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.paused[ref.Namespace]; ok && now.Before(p.until) {
		return p.cause
	}
	key := budgetKey(ref)
	tokens := float64(lockBurst)
	if s, ok := b.locks[key]; ok {
		tokens = s.left(now)
	}
	if tokens < 1 {
		return droppedLockBudget
	}
	if !b.global.TryAccept() {
		return droppedRateLimited
	}
	b.locks[key] = spent{tokens: tokens - 1, at: now}
	return ""
}

// pause stops writing in namespace until until.
func (b *budget) pause(namespace string, until time.Time, cause string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused[namespace] = pause{until: until, cause: cause}
}

// pausedUntil is when writing in namespace resumes (zero: not paused).
func (b *budget) pausedUntil(namespace string) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.paused[namespace].until
}

// forget drops the budgets that are full again and the pauses that are over: both are what
// no state means.
func (b *budget) forget(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, s := range b.locks {
		if s.left(now) >= lockBurst {
			delete(b.locks, k)
		}
	}
	for ns, p := range b.paused {
		if !now.Before(p.until) {
			delete(b.paused, ns)
		}
	}
}

// size is how many locks and namespaces the budget remembers.
func (b *budget) size() (locks, namespaces int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.locks), len(b.paused)
}
