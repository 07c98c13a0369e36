package events

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// TestReasonsTable holds everything a reason needs to its row of the reasons table: an
// action, a note (Note words every reason), a parser for exactly the reasons that make
// history, and docs/events.md's row (type, action, read back into history).
func TestReasonsTable(t *testing.T) {
	doc := docsReasonRows(t)
	seen := map[string]bool{}
	for _, r := range reasonTable {
		if seen[r.name] {
			t.Errorf("reason %s has two rows", r.name)
		}
		seen[r.name] = true
		if r.action == "" {
			t.Errorf("reason %s has no action", r.name)
		}
		c := Change{Reason: r.name, Old: "a", New: "b", Held: time.Second, Leaderless: time.Second, Ended: lock.Released, Lock: "Lease ns/x"}
		if c.Note() == "" {
			t.Errorf("Change.Note words nothing for reason %s", r.name)
		}
		if _, err := parseNote(r.name, c.Note()); (err == nil) != r.history {
			t.Errorf("reason %s: history %v, but parseNote of its note gives error %v", r.name, r.history, err)
		}
		row, ok := doc[r.name]
		if !ok {
			t.Errorf("docs/events.md's reasons table has no row for %s", r.name)
			continue
		}
		delete(doc, r.name)
		if row.action != "`"+r.action+"`" {
			t.Errorf("docs/events.md says %s's action is %s, the exporter writes %q", r.name, row.action, r.action)
		}
		wantType := "`Normal`"
		if r.warning {
			wantType = "`Warning`"
		}
		if r.name == ReasonLeaderChanged {
			wantType = "`Warning` if the previous tenure expired (a leader died or stalled), else `Normal`"
		}
		if row.typ != wantType {
			t.Errorf("docs/events.md says %s's type is %s, want %s", r.name, row.typ, wantType)
		}
		if want := map[bool]string{true: "yes", false: "no"}[r.history]; row.history != want {
			t.Errorf("docs/events.md says %s is read back into history: %s, want %s", r.name, row.history, want)
		}
	}
	for name := range doc {
		t.Errorf("docs/events.md's reasons table has a row for %s, which the exporter does not write", name)
	}
}

// TestEventTypeFollowsTheTable: the type of each reason's Event, and LeaderChanged's Warning
// after an expired tenure only.
func TestEventTypeFollowsTheTable(t *testing.T) {
	for _, tc := range []struct {
		c    Change
		want string
	}{
		{Change{Reason: ReasonLeaderChanged, Ended: lock.Expired}, "Warning"},
		{Change{Reason: ReasonLeaderChanged, Ended: lock.Released}, "Normal"},
		{Change{Reason: ReasonLeaderChanged, Ended: lock.Unknown}, "Normal"},
		{Change{Reason: ReasonLeaseReleased}, "Normal"},
		{Change{Reason: ReasonLeaseExpired}, "Warning"},
		{Change{Reason: ReasonLeaseDeleted}, "Normal"},
		{Change{Reason: ReasonExpectedLeaseMissing}, "Warning"},
		{Change{Reason: ReasonPreferredHolderChanged}, "Normal"},
	} {
		if got := eventType(tc.c); got != tc.want {
			t.Errorf("eventType(%s, ended %v) = %s, want %s", tc.c.Reason, tc.c.Ended, got, tc.want)
		}
	}
}

type docRow struct{ typ, action, history string }

// docsReasonRows reads docs/events.md's reasons table: reason, type, action, history.
func docsReasonRows(t *testing.T) map[string]docRow {
	t.Helper()
	b, err := os.ReadFile("../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	const header = "| reason | type | action | read back into history | when | note says |"
	_, table, ok := strings.Cut(string(b), header+"\n")
	if !ok {
		t.Fatalf("docs/events.md has no line %q", header)
	}
	rows := map[string]docRow{}
	for _, line := range strings.Split(table, "\n")[1:] {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		cells := strings.Split(line, " | ")
		if len(cells) < 4 {
			t.Fatalf("docs/events.md reasons row %q has too few cells", line)
		}
		rows[strings.Trim(strings.TrimPrefix(cells[0], "| "), "`")] = docRow{typ: cells[1], action: cells[2], history: cells[3]}
	}
	return rows
}
