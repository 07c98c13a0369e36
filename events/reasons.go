package events

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/lease-exporter/lease-exporter/lock"
)

// The Events' reasons (docs/events.md, "The Events").
const (
	ReasonLeaderChanged          = "LeaderChanged"
	ReasonLeaseExpired           = "LeaseExpired"
	ReasonLeaseReleased          = "LeaseReleased"
	ReasonLeaseDeleted           = "LeaseDeleted"
	ReasonExpectedLeaseMissing   = "ExpectedLeaseMissing"
	ReasonPreferredHolderChanged = "PreferredHolderChanged"
)

// reason is one kind of Event the exporter writes: a row of docs/events.md's table. A new
// reason is a row here, the place in the tracker (change.go) that decides it happened, and
// its sentences in the note (note.go) and their parser (noteparse.go); TestReasonsTable holds
// the note, its parser and docs/events.md to this table.
type reason struct {
	name string
	// action is the Event's action field: what the exporter saw happen to the lock.
	action string
	// warning makes the Event's type Warning rather than Normal. LeaderChanged is Warning
	// only after an expired tenure (eventType).
	warning bool
	// history: the rebuild reads the Event back into the lock's tenures.
	history bool
}

var reasonTable = []reason{
	{name: ReasonLeaderChanged, action: "Acquired", history: true},
	{name: ReasonLeaseReleased, action: "Released", history: true},
	{name: ReasonLeaseExpired, action: "Expired", warning: true, history: true},
	{name: ReasonLeaseDeleted, action: "Deleted"},
	{name: ReasonExpectedLeaseMissing, action: "Missing", warning: true},
	{name: ReasonPreferredHolderChanged, action: "Preferred"},
}

// Reasons lists every reason, so their counters start at 0.
var Reasons = func() []string {
	out := make([]string, len(reasonTable))
	for i, r := range reasonTable {
		out[i] = r.name
	}
	return out
}()

// reasonOf is the row of the reason named name.
func reasonOf(name string) (reason, bool) {
	for _, r := range reasonTable {
		if r.name == name {
			return r, true
		}
	}
	return reason{}, false
}

// eventType is the type of the Event that states c.
func eventType(c Change) string {
	r, _ := reasonOf(c.Reason)
	if r.warning || (c.Reason == ReasonLeaderChanged && c.Ended == lock.Expired) {
		return corev1.EventTypeWarning // e.g. the leader died or stalled: a failover, not a handover
	}
	return corev1.EventTypeNormal
}

// actionOf is the action field of an Event with the reason named name.
func actionOf(name string) string {
	r, _ := reasonOf(name)
	return r.action
}

// makesHistory says whether the rebuild reads an Event with the reason named name back into
// a lock's tenures.
func makesHistory(name string) bool {
	r, _ := reasonOf(name)
	return r.history
}
