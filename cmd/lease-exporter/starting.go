package main

import (
	"errors"
	"net/http"
	"sync/atomic"
)

// starting is what the server serves while the start-up checks run: the server listens as
// soon as the process runs, so /healthz answers at once (a start queued by the API server's
// flow control must not fail the liveness probe and crash-loop the Pod), /readyz answers 503
// saying which check is under way, and every route that reads the cache answers 503 until
// open hands over the real handlers.
type starting struct {
	phase atomic.Pointer[string]
	h     atomic.Pointer[handlers]
	ready atomic.Pointer[func() error]
}

// newStarting returns a starting server state in phase.
func newStarting(phase string) *starting {
	s := &starting{}
	s.enter(phase)
	return s
}

// enter records what start-up is doing now, for /readyz and the 503 bodies.
func (s *starting) enter(phase string) { s.phase.Store(&phase) }

// open hands the routes to h and readiness to ready: start-up is over.
func (s *starting) open(h handlers, ready func() error) {
	s.ready.Store(&ready)
	s.h.Store(&h)
}

func (s *starting) err() error { return errors.New("starting: " + *s.phase.Load()) }

// handlers returns the handlers to give newServer: each serves through open's once it ran.
func (s *starting) handlers() handlers {
	return handlers{
		metrics: s.route(func(h *handlers) http.Handler { return h.metrics }),
		leases:  s.route(func(h *handlers) http.Handler { return h.leases }),
	}
}

func (s *starting) route(pick func(*handlers) http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := s.h.Load(); h != nil {
			pick(h).ServeHTTP(w, r)
			return
		}
		http.Error(w, s.err().Error(), http.StatusServiceUnavailable)
	})
}

// readiness is /readyz's judgement: not ready while starting, then open's.
func (s *starting) readiness() error {
	if ready := s.ready.Load(); ready != nil {
		return (*ready)()
	}
	return s.err()
}
