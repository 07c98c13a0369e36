package events

import (
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// Every note that makes history reads back to the facts it was written from, whatever the
// holders' identities contain; the others are not mistaken for history.
func TestNotesReadBackToTheirFacts(t *testing.T) {
	odd := `pod "x"\n_€` + "\t"
	cases := []Change{
		{Reason: ReasonLeaderChanged, Old: "a", New: "b", Held: 5*time.Minute + 3*time.Second, Ended: lock.Expired, Leaderless: 15200 * time.Millisecond},
		{Reason: ReasonLeaderChanged, Old: odd, New: "b_1", Held: unknown, Ended: lock.Unknown, Leaderless: unknown},
		{Reason: ReasonLeaderChanged, Old: "", New: odd, Held: unknown, Ended: lock.Unknown, Leaderless: 300 * time.Millisecond},
		{Reason: ReasonLeaderChanged, Old: "a", New: "a", Held: time.Hour, Ended: lock.TakenOver, Leaderless: 0},
		{Reason: ReasonLeaderChanged, Old: "c", New: "d", Held: 2 * time.Second, Ended: lock.HandedOver, Leaderless: time.Second},
		{Reason: ReasonLeaseReleased, Old: odd, Held: 90 * time.Second, Ended: lock.Released, Leaderless: unknown},
		{Reason: ReasonLeaseReleased, Old: "c", Held: unknown, Ended: lock.HandedOver, Leaderless: unknown},
		{Reason: ReasonLeaseExpired, Old: "a", Held: 3 * time.Hour, Ended: lock.Expired, Leaderless: 11 * time.Second},
		{Reason: ReasonLeaseExpired, Old: odd, Held: unknown, Ended: lock.Expired, Leaderless: 12 * time.Second},
	}
	for _, want := range cases {
		note := want.Note()
		got, err := parseNote(want.Reason, note)
		if err != nil {
			t.Errorf("%s note %q: %v", want.Reason, note, err)
			continue
		}
		if got != want {
			t.Errorf("note %q read back as\n%+v, want\n%+v", note, got, want)
		}
	}
	for _, c := range []Change{
		{Reason: ReasonLeaseDeleted, Old: "a", Still: true},
		{Reason: ReasonExpectedLeaseMissing, Lock: "kube-system/kube-scheduler/leases"},
		{Reason: ReasonPreferredHolderChanged, Old: "a", New: "b", Strategy: "OldestEmulationVersion"},
	} {
		if _, err := parseNote(c.Reason, c.Note()); err == nil {
			t.Errorf("%s note %q read as history", c.Reason, c.Note())
		}
	}
	if _, err := parseNote(ReasonLeaderChanged, "Leadership moved somewhere."); err == nil {
		t.Error("a note in another wording read as history; want an error the rebuild counts")
	}
}

// A note fits the API's 1 kB however long the holders' identities are, and however much
// quoting lengthens them, and still reads back.
func TestNoteFitsTheAPIsBound(t *testing.T) {
	for _, long := range []string{strings.Repeat("h", 5000), strings.Repeat("\x01", 5000), strings.Repeat("€", 2000)} {
		for _, c := range []Change{
			{Reason: ReasonLeaderChanged, Old: long, New: long, Held: time.Hour, Ended: lock.HandedOver, Leaderless: time.Hour},
			{Reason: ReasonPreferredHolderChanged, Old: long, New: long, Strategy: "OldestEmulationVersion"},
			{Reason: ReasonLeaseExpired, Old: long, Held: time.Hour, Leaderless: time.Hour},
		} {
			if n := len(c.Note()); n > 1024 {
				t.Errorf("%s note of %d bytes, the API takes at most 1024", c.Reason, n)
			}
			if _, err := parseNote(c.Reason, c.Note()); makesHistory(c.Reason) && err != nil {
				t.Errorf("a cut holder's %s note does not read back: %v", c.Reason, err)
			}
		}
	}
}
