package informer

import (
	"testing"
	"time"
)

// TestStaleness: how far a judgement time lies behind now, never negative.
func TestStaleness(t *testing.T) {
	now := t0.Add(90 * time.Second)
	if s := Staleness(t0, now); s != 90*time.Second {
		t.Errorf("Staleness = %v, want 90s", s)
	}
	if s := Staleness(now, now); s != 0 {
		t.Errorf("Staleness of a current view = %v, want 0", s)
	}
	if s := Staleness(now.Add(time.Second), now); s != 0 {
		t.Errorf("Staleness of a judgement after now = %v, want 0", s)
	}
}
