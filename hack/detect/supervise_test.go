package main

import (
	"testing"
	"time"
)

// The back-off follows the kubelet's: 10 s, doubling up to 5 minutes while runs are short,
// back to 10 s after a run of 10 minutes.
func TestNextBackOffDoublesToFiveMinutesAndResetsAfterALongRun(t *testing.T) {
	var got []time.Duration
	b := time.Duration(0)
	for range 7 {
		b = nextBackOff(b, time.Second)
		got = append(got, b)
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("back-offs after quick exits = %v, want %v", got, want)
		}
	}
	if b := nextBackOff(5*time.Minute, 10*time.Minute); b != 10*time.Second {
		t.Errorf("after a 10-minute run the back-off is %s, want 10s", b)
	}
}
