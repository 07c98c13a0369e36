package lock

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
)

// ProjectAnnotationLock projects the metadata of a ConfigMap or Endpoints object carrying the
// leader annotation into the record of a lock of kind k; false without the annotation (the
// object is not a lock). What the annotation's record says takes the place of a Lease's spec;
// fields it could not read are left unset and remembered (RecordProblems), so the lock is
// still exported with what could be read. Only the key, versions, owner and the leader record
// are kept: other annotations, labels and managedFields are left for the garbage collector.
func ProjectAnnotationLock(m *metav1.ObjectMeta, k Kind) (*Lease, bool) {
	annotation, ok := m.Annotations[leaderrecord.Annotation]
	if !ok {
		return nil, false
	}
	rec, problems := leaderrecord.Parse(annotation)
	out, rare := projectMeta(m)
	out.bits |= uint8(k) & kindMask
	out.Class = ClassLeaderElection
	out.Holder = rec.Holder // valid UTF-8: the parser replaced anything else
	if out.Holder == out.Name() {
		out.Holder = out.Name()
	}
	if rec.HasRenewTime {
		out.RenewTime, out.HasRenewTime = rec.RenewTime, true
		out.ObservedRenewTime = out.RenewTime // as in Project: until observeLock sets it
	}
	out.AcquireTime, out.HasAcquireTime = rec.AcquireTime, rec.HasAcquireTime
	out.DurationSeconds, out.HasDuration = rec.DurationSeconds, rec.HasDuration
	out.Transitions, out.HasTransitions = rec.Transitions, rec.HasTransitions
	for _, p := range problems {
		rare.problems = rare.problems.Add(p)
	}
	out.setRare(rare)
	return out, true
}

// RecordProblems returns the fields of an annotation lock's record that could not be read,
// in a fixed order; nil for a Lease and for a record read in full.
func (l *Lease) RecordProblems() []leaderrecord.Problem {
	if l.rare == nil {
		return nil
	}
	return l.rare.problems.List()
}

// DescribeProblems renders problems for a log line: "renewTime: bad_time, malformed_json".
func DescribeProblems(problems []leaderrecord.Problem) string {
	parts := make([]string, len(problems))
	for i, p := range problems {
		parts[i] = string(p.Reason)
		if p.Field != "" {
			parts[i] = p.Field + ": " + parts[i]
		}
	}
	return strings.Join(parts, ", ")
}
