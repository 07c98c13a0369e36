package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// The back-off follows the kubelet's: 10 s, doubling up to 5 minutes while runs are short,
// back to 10 s after a run of 10 minutes.
func TestNextBackOffDoublesToFiveMinutesAndResetsAfterALongRun(t *testing.T) {
	var got []time.Duration
	b := time.Duration(0)
	for range 7 {
		b = nextBackOff(10*time.Second, b, time.Second)
		got = append(got, b)
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("back-offs after quick exits = %v, want %v", got, want)
		}
	}
	if b := nextBackOff(10*time.Second, 5*time.Minute, 10*time.Minute); b != 10*time.Second {
		t.Errorf("after a 10-minute run the back-off is %s, want 10s", b)
	}
}

// An elector that exits on its own is started again, one whose start fails is tried again
// after the back-off rather than given up (a kubelet keeps restarting a container that
// cannot start), and ending it through the supervisor is final.
func TestSuperviseRestartsExitsAndFailedStartsUntilEnded(t *testing.T) {
	var starts atomic.Int32
	running := make(chan chan struct{}, 10)
	start := func() (process, error) {
		n := starts.Add(1)
		if n == 2 { // the first restart fails, as a component does while the API server is down
			return process{}, errors.New("exited early")
		}
		done := make(chan struct{})
		running <- done
		return process{done: done, kill: func() { close(done) }, stop: func() { close(done) }}, nil
	}
	s, err := superviseFrom(context.Background(), slog.New(slog.DiscardHandler), "test", 10*time.Millisecond, start)
	if err != nil {
		t.Fatal(err)
	}
	close(<-running) // the first run exits on its own
	select {
	case <-running: // the third start, after the failed second
	case <-time.After(5 * time.Second):
		t.Fatalf("not started again after a failed start (%d starts)", starts.Load())
	}
	if got := starts.Load(); got != 3 {
		t.Errorf("%d starts, want 3 (exit, failed start, start)", got)
	}
	s.Stop()
	time.Sleep(100 * time.Millisecond)
	if got := starts.Load(); got != 3 {
		t.Errorf("%d starts after Stop, want none after it", got)
	}
}
