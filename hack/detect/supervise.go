package main

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// The kubelet's crash-loop back-off for a container that exits (restartPolicy: Always): 10 s
// before the first restart, doubling up to 5 minutes, and back to 10 s once a run lasted 10
// minutes. An elector that cannot reach the API server exits again at once (the Python
// client's does), so an outage sees the back-off grow as it would on a node.
const (
	backOffInitial = 10 * time.Second
	backOffMax     = 5 * time.Minute
	backOffReset   = 10 * time.Minute
)

// nextBackOff is the back-off after a run that lasted ran, when the last one was last and
// the first is initial.
func nextBackOff(initial, last, ran time.Duration) time.Duration {
	switch {
	case last == 0 || ran >= backOffReset:
		return initial
	default:
		return min(2*last, backOffMax)
	}
}

// process is one process of a supervised elector: closed done when it exits, and the two ways
// the harness ends it.
type process struct {
	done       <-chan struct{}
	kill, stop func()
}

// supervised runs an elector as a Pod with restartPolicy: Always runs its container.
// kube-scheduler, kube-controller-manager and controller-runtime exit when they lose their
// lock, and the Python client's elector returns; in a cluster the kubelet starts them again,
// so an outage that makes them lose their lock leaves candidates behind, not an empty lock.
// The harness ending it (a fault's kill or stop, the trial's cleanup) is final, as a Pod
// deleted or its node lost.
type supervised struct {
	mu    sync.Mutex
	cur   process
	ended bool
}

// supervise starts what start starts and restarts it after the kubelet's back-off whenever
// it exits on its own, until ctx ends or the harness ends it.
func supervise(ctx context.Context, logger *slog.Logger, what string, start func() (process, error)) (*supervised, error) {
	return superviseFrom(ctx, logger, what, backOffInitial, start)
}

// superviseFrom is supervise with the first back-off initial.
func superviseFrom(ctx context.Context, logger *slog.Logger, what string, initial time.Duration, start func() (process, error)) (*supervised, error) {
	r, err := start()
	if err != nil {
		return nil, err
	}
	s := &supervised{cur: r}
	go func() {
		var backOff time.Duration
		for {
			s.mu.Lock()
			done := s.cur.done
			s.mu.Unlock()
			began := time.Now()
			select {
			case <-ctx.Done():
				return
			case <-done:
			}
			if s.isEnded() {
				return
			}
			backOff = nextBackOff(initial, backOff, time.Since(began))
			logger.Info("elector exited on its own; restarting it as the kubelet would", "elector", what, "after", backOff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backOff):
			}
			s.mu.Lock()
			if s.ended {
				s.mu.Unlock()
				return
			}
			r, err := start()
			if err != nil {
				// A container that fails to start is one more exit to the kubelet: it backs off
				// and tries again (kube-controller-manager exits at once while the API server
				// is down, and a supervisor that gave up left its lock without candidates).
				closed := make(chan struct{})
				close(closed)
				r = process{done: closed, kill: func() {}, stop: func() {}}
				logger.Info("restarting an elector failed; backing off", "elector", what, "err", err)
			}
			s.cur = r
			s.mu.Unlock()
		}
	}()
	return s, nil
}

func (s *supervised) isEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// end stops supervising and ends the current process with kill or stop; it waits for a
// restart under way, so nothing is left running.
func (s *supervised) end(kill bool) {
	s.mu.Lock()
	s.ended = true
	r := s.cur
	s.mu.Unlock()
	if kill {
		r.kill()
	} else {
		r.stop()
	}
}

func (s *supervised) Kill() { s.end(true) }
func (s *supervised) Stop() { s.end(false) }
