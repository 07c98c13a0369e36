package informer

import (
	"testing"
	"time"
)

type asOfView struct{ View }

func (asOfView) FreshAsOf(time.Time) time.Time { return t0 }

// JudgedAt is the view's FreshAsOf, and Staleness how far it lies behind now.
func TestJudgedAtAndStaleness(t *testing.T) {
	now := t0.Add(90 * time.Second)
	if at := JudgedAt(asOfView{}, now); !at.Equal(t0) {
		t.Errorf("JudgedAt = %v, want FreshAsOf's %v", at, t0)
	}
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
