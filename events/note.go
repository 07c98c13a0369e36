package events

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// unknown marks a duration the exporter could not measure (a change found in a relist).
const unknown time.Duration = -1

// Change is what one Event says: its reason and the facts its note words. The note is the
// only free-text field an Event has, so it carries the facts the API has no field for
// (holders, how a tenure ended, how long it lasted), in fixed sentences that parseNote reads
// back when the history is rebuilt.
type Change struct {
	Reason string
	// Old and New are the holders before and after; Old is "" when the exporter never saw one.
	Old, New string
	// Held is how long Old held the lock; unknown when its start was not seen.
	Held time.Duration
	// Ended is how Old's tenure ended (LeaderChanged, LeaseReleased, LeaseExpired).
	Ended lock.Ending
	// Leaderless is how long nobody held the lock before New took it (LeaderChanged), or,
	// for LeaseExpired, how long ago the lease expired; unknown when not measured.
	Leaderless time.Duration
	// Still says a deleted lock's holder was still valid when it went (LeaseDeleted).
	Still bool
	// Lock names an expected lock that is missing (ExpectedLeaseMissing): resource/namespace/name.
	Lock string
	// Strategy is a coordinated election's strategy (PreferredHolderChanged).
	Strategy string
}

// endings word how a tenure ended, and parseNote reads them back.
var endings = map[lock.Ending]string{
	lock.Released:             "it was released",
	lock.Expired:              "its lease expired",
	lock.TakenOver:            "it was taken over while still valid",
	lock.HandedOver:           "it was handed over to the preferred holder",
	lock.Unknown:              "unknown how (the change was seen in a relist after a watch gap)",
	lock.ClearedByPredecessor: "it was cleared by its predecessor",
}

// maxQuoted bounds each holder in a note, quoted: an Event's note is at most 1 kB, and a
// holder identity is free text, which quoting may make four times longer (\x01).
const maxQuoted = 250

func quote(holder string) string {
	q := strconv.Quote(holder)
	for len(q) > maxQuoted {
		holder = strings.ToValidUTF8(holder[:len(holder)*3/4], "")
		q = strconv.Quote(holder + "…")
	}
	return q
}

func dur(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

// Note words c as one or a few human sentences.
func (c Change) Note() string {
	var b strings.Builder
	switch c.Reason {
	case ReasonLeaderChanged:
		if c.Old != "" {
			fmt.Fprintf(&b, "Leader changed from %s to %s.", quote(c.Old), quote(c.New))
		} else {
			fmt.Fprintf(&b, "Leader changed to %s; the exporter saw no previous holder.", quote(c.New))
		}
		if c.Held >= 0 && c.Old != "" {
			fmt.Fprintf(&b, " The previous tenure lasted %s.", dur(c.Held))
		}
		if w, ok := endings[c.Ended]; ok && c.Old != "" {
			fmt.Fprintf(&b, " It ended: %s.", w)
		}
		if c.Leaderless >= 0 {
			fmt.Fprintf(&b, " Without a leader for %s.", dur(c.Leaderless))
		}
	case ReasonLeaseReleased:
		fmt.Fprintf(&b, "%s released the lock", quote(c.Old))
		if c.Held >= 0 {
			fmt.Fprintf(&b, " after holding it for %s", dur(c.Held))
		}
		b.WriteString(".")
		if c.Ended == lock.HandedOver {
			fmt.Fprintf(&b, " It ended: %s.", endings[lock.HandedOver])
		}
	case ReasonLeaseExpired:
		fmt.Fprintf(&b, "%s stopped renewing", quote(c.Old))
		if c.Held >= 0 {
			fmt.Fprintf(&b, " after holding the lock for %s", dur(c.Held))
		}
		fmt.Fprintf(&b, "; its lease expired %s ago and nobody has taken over.", dur(c.Leaderless))
	case ReasonLeaseDeleted:
		switch {
		case c.Old == "":
			b.WriteString("The lock was deleted; nobody held it.")
		case c.Still:
			fmt.Fprintf(&b, "The lock was deleted while %s held it.", quote(c.Old))
		default:
			fmt.Fprintf(&b, "The lock was deleted; its last holder, %s, no longer held it.", quote(c.Old))
		}
	case ReasonExpectedLeaseMissing:
		fmt.Fprintf(&b, "The lock %s, declared with --expect, does not exist.", c.Lock)
	case ReasonPreferredHolderChanged:
		fmt.Fprintf(&b, "Preferred holder changed from %s to %s", quote(c.Old), quote(c.New))
		if c.Strategy != "" {
			fmt.Fprintf(&b, " (strategy %s)", c.Strategy)
		}
		b.WriteString(".")
	}
	return b.String()
}
