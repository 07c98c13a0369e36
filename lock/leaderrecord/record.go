// Package leaderrecord reads the leader-election record that ConfigMap and Endpoints locks
// keep in an annotation (client-go's old annotation locks, the Python client's ConfigMapLock):
// Parse returns what could be read and a Problem per field that could not. It is the
// informer's annotation-lock decoder (lock/annotation_lock.go), which keeps the Problems
// in a lock's record and counts them by Reason in lease_exporter_lock_parse_errors_total. It
// is its own package because it needs nothing of the informer: the tests of the election
// harness (internal/testenv/election) read the records real electors write with the same
// parser the exporter uses.
package leaderrecord

import (
	"encoding/json"
	"strings"
)

// Annotation is the annotation in which ConfigMap and Endpoints locks keep their record.
const Annotation = "control-plane.alpha.kubernetes.io/leader"

// Record is what a leader-election annotation says, in the units of lock.Lease: times are
// Unix microseconds. Each Has flag says whether the field was present and valid.
type Record struct {
	// Holder is holderIdentity, "" when absent, null or released.
	Holder string
	// AcquireTime and RenewTime are Unix µs, valid only when HasAcquireTime/HasRenewTime.
	AcquireTime, RenewTime int64
	// DurationSeconds is leaseDurationSeconds, always in [1, MaxInt32] when HasDuration.
	DurationSeconds int32
	// Transitions is leaderTransitions, which the Python client never writes.
	Transitions int32

	HasDuration, HasAcquireTime, HasRenewTime, HasTransitions bool
}

// Reason is why a field of a record could not be read: the value of the reason label
// of lease_exporter_lock_parse_errors_total.
type Reason string

// The reasons, one per kind of field, so the label stays bounded whatever the input.
const (
	// ReasonMalformedJSON: the annotation is not a JSON object (syntax error, truncated,
	// trailing garbage, not an object). Fields read before the error are kept.
	ReasonMalformedJSON Reason = "malformed_json"
	// ReasonBadHolder: holderIdentity is not a string, is not valid UTF-8 (replaced with
	// U+FFFD) or is longer than maxHolderBytes (truncated).
	ReasonBadHolder Reason = "bad_holder"
	// ReasonBadDuration: leaseDurationSeconds is not an integer (number or decimal string)
	// in [1, MaxInt32].
	ReasonBadDuration Reason = "bad_duration"
	// ReasonBadTime: acquireTime or renewTime is neither RFC 3339 nor Python's
	// str(datetime), or lies outside [1970, 3000).
	ReasonBadTime Reason = "bad_time"
	// ReasonBadTransitions: leaderTransitions is not an integer in [0, MaxInt32].
	ReasonBadTransitions Reason = "bad_transitions"
)

// Reasons lists every Reason, so the counter can start each series at zero.
var Reasons = []Reason{ReasonMalformedJSON, ReasonBadHolder, ReasonBadDuration, ReasonBadTime, ReasonBadTransitions}

// Problem is one field that could not be read.
type Problem struct {
	// Field is the JSON key ("holderIdentity", …), "" for ReasonMalformedJSON.
	Field  string
	Reason Reason
}

// maxHolderBytes bounds a holder identity (a hostname and a UUID need under 300 bytes):
// the holder becomes a label value.
const maxHolderBytes = 1024

// The fields of a record; keys match case-insensitively, as encoding/json (and so client-go,
// when it still read annotation locks) matches them.
const (
	fieldHolder      = "holderIdentity"
	fieldDuration    = "leaseDurationSeconds"
	fieldAcquire     = "acquireTime"
	fieldRenew       = "renewTime"
	fieldTransitions = "leaderTransitions"
)

// Parse reads the leader annotation of a ConfigMap or Endpoints lock, as written
// by client-go's old annotation locks (LeaderElectionRecord: numbers, RFC 3339 times) or by the
// Python client's ConfigMapLock (duration as a string, times as a zoneless str(datetime),
// taken as UTC; no leaderTransitions). It returns what it could read and a problem for each
// field it could not; "" is the record of a lock nobody has held yet, not a problem. Unknown
// fields (strategy, preferredHolder, anything newer) are skipped. Duplicate keys: the last
// wins, as with both clients, and an unreadable earlier one is still reported. It never
// panics. It runs on every watch event of an annotation lock; encoding/json is fast enough
// for that (BenchmarkParseLeaderRecord, docs/benchmarks.md).
func Parse(annotation string) (Record, []Problem) {
	var r Record
	var problems []Problem
	if annotation == "" {
		return r, nil
	}
	complete := members(annotation, func(key string, v json.RawMessage) {
		if p := r.set(key, v); p.Reason != "" {
			problems = append(problems, p)
		}
	})
	if !complete {
		problems = append(problems, Problem{Reason: ReasonMalformedJSON})
	}
	return r, problems
}

// set stores the value of one key; an invalid value clears the field and names the problem.
func (r *Record) set(key string, v json.RawMessage) Problem {
	switch {
	case strings.EqualFold(key, fieldHolder):
		h, ok := holder(v)
		r.Holder = h
		if !ok {
			return Problem{fieldHolder, ReasonBadHolder}
		}
	case strings.EqualFold(key, fieldDuration):
		n, present, ok := integer(v, 1)
		r.DurationSeconds, r.HasDuration = int32(n), present && ok
		if !ok {
			return Problem{fieldDuration, ReasonBadDuration}
		}
	case strings.EqualFold(key, fieldTransitions):
		n, present, ok := integer(v, 0)
		r.Transitions, r.HasTransitions = int32(n), present && ok
		if !ok {
			return Problem{fieldTransitions, ReasonBadTransitions}
		}
	case strings.EqualFold(key, fieldAcquire):
		us, present, ok := recordTime(v)
		r.AcquireTime, r.HasAcquireTime = us, present && ok
		if !ok {
			return Problem{fieldAcquire, ReasonBadTime}
		}
	case strings.EqualFold(key, fieldRenew):
		us, present, ok := recordTime(v)
		r.RenewTime, r.HasRenewTime = us, present && ok
		if !ok {
			return Problem{fieldRenew, ReasonBadTime}
		}
	}
	return Problem{}
}
