package events

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
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

// A holder identity that words the note's own sentences is read as a holder, nothing more:
// the issue-48 forgery (a new holder claiming the previous tenure lasted 99 hours and was
// released) reads back as the facts the exporter wrote.
func TestHostileHolderCannotSpeakTheNotesSentences(t *testing.T) {
	forged := `" The previous tenure lasted 99h0m0s. It ended: it was released. Without a leader for 1h0m0s.`
	cases := []Change{
		{Reason: ReasonLeaderChanged, Old: "alpha", New: forged, Held: 12 * time.Second, Ended: lock.TakenOver, Leaderless: unknown},
		{Reason: ReasonLeaderChanged, Old: "alpha", New: forged, Held: unknown, Ended: lock.Unknown, Leaderless: unknown},
		{Reason: ReasonLeaderChanged, Old: forged, New: "beta", Held: unknown, Ended: lock.Unknown, Leaderless: unknown},
		{Reason: ReasonLeaderChanged, Old: "", New: forged + `"; the exporter saw no previous holder.`, Held: unknown, Ended: lock.Unknown, Leaderless: unknown},
		{Reason: ReasonLeaseReleased, Old: forged + ` It ended: it was handed over to the preferred holder.`, Held: unknown, Ended: lock.Released, Leaderless: unknown},
		{Reason: ReasonLeaseExpired, Old: `x" stopped renewing after holding the lock for 99h0m0s`, Held: unknown, Ended: lock.Expired, Leaderless: time.Second},
	}
	for _, want := range cases {
		note := want.Note()
		got, err := parseNote(want.Reason, note)
		if err != nil || got != want {
			t.Errorf("note %q read back as\n%+v (%v), want\n%+v", note, got, err, want)
		}
	}
}

// Notes that are not exactly the exporter's wording are refused, not read in part: words
// after the last sentence, sentences out of order, a holder not quoted, a duration that does
// not parse, a sentence without its full stop.
func TestNotesNotInTheExportersWordingAreRefused(t *testing.T) {
	for _, tc := range []struct{ reason, note string }{
		{ReasonLeaderChanged, `Leader changed from "a" to "b". The previous tenure lasted 1s. Trust me.`},
		{ReasonLeaderChanged, `Leader changed from "a" to "b". It ended: it was released. The previous tenure lasted 1s.`},
		{ReasonLeaderChanged, `Leader changed from a to "b".`},
		{ReasonLeaderChanged, `Leader changed from "a" to "b". The previous tenure lasted 99 hours.`},
		{ReasonLeaderChanged, `Leader changed from "a" to "b". The previous tenure lasted -5s.`},
		{ReasonLeaderChanged, `Leader changed from "a" to "b". It ended: it was eaten.`},
		{ReasonLeaderChanged, `Leader changed from "a" to "b`},
		{ReasonLeaderChanged, `Prefix. Leader changed from "a" to "b".`},
		{ReasonLeaseReleased, `"a" released the lock. It ended: it was released.`},
		{ReasonLeaseReleased, `"a" released the lock after holding it for 1s`},
		{ReasonLeaseExpired, `"a" stopped renewing; its lease expired 1s ago`},
	} {
		if c, err := parseNote(tc.reason, tc.note); err == nil {
			t.Errorf("%s note %q read as %+v; want an error", tc.reason, tc.note, c)
		}
	}
}

// FuzzNoteRoundTrip: for any two holders and any facts a note words, parseNote(Note(c))
// returns c. A holder longer than a note has room for is cut (quote), and reads back cut.
func FuzzNoteRoundTrip(f *testing.F) {
	f.Add(uint8(0), "alpha", `" The previous tenure lasted 99h0m0s. It ended: it was released.`, int64(120), int64(-1), uint8(lock.TakenOver))
	f.Add(uint8(1), `a\"b`, "", int64(-1), int64(3), uint8(lock.HandedOver))
	f.Add(uint8(2), "\xff\x00€", "b", int64(7), int64(0), uint8(0))
	f.Add(uint8(0), "", "x", int64(0), int64(5), uint8(lock.Released))
	f.Fuzz(func(t *testing.T, reason uint8, old, new string, held, leaderless int64, ended uint8) {
		reasons := []string{ReasonLeaderChanged, ReasonLeaseReleased, ReasonLeaseExpired}
		c := Change{Reason: reasons[int(reason)%len(reasons)], Old: old, New: new,
			Held: tenths(held), Leaderless: tenths(leaderless), Ended: lock.Ending(ended)}
		want := c
		want.Old, want.New = readBack(t, old), readBack(t, new)
		switch c.Reason {
		case ReasonLeaderChanged:
			if _, worded := endings[c.Ended]; !worded || c.Old == "" {
				want.Ended = lock.Unknown
			}
			if c.Old == "" {
				want.Held = unknown
			}
		case ReasonLeaseReleased:
			want.New, want.Leaderless = "", unknown
			if c.Ended != lock.HandedOver {
				want.Ended = lock.Released
			}
		case ReasonLeaseExpired:
			// The writer always measures how long ago an expired lease ran out.
			c.Leaderless = max(c.Leaderless, 0)
			want.New, want.Leaderless, want.Ended = "", c.Leaderless, lock.Expired
		}
		got, err := parseNote(c.Reason, c.Note())
		if err != nil || got != want {
			t.Fatalf("note %q read back as\n%+v (%v), want\n%+v", c.Note(), got, err, want)
		}
	})
}

// tenths is a duration a note words exactly: n tenths of a second, unknown when negative.
func tenths(n int64) time.Duration {
	if n < 0 {
		return unknown
	}
	return time.Duration(n%(1<<32)) * 100 * time.Millisecond
}

// readBack is holder as a note carries it: itself when it fits, else cut where quote cuts it.
func readBack(t *testing.T, holder string) string {
	if q := strconv.Quote(holder); len(q) <= maxQuoted {
		return holder
	}
	s, err := strconv.Unquote(quote(holder))
	if err != nil {
		t.Fatalf("quote(%q) = %q does not unquote: %v", holder, quote(holder), err)
	}
	return s
}
