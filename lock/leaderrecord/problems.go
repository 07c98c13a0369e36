package leaderrecord

// ProblemSet is a set of Problems in one byte, one bit per field (and one for malformed
// JSON): how a lock's record, which must stay small at 100k locks, keeps what Parse reported.
type ProblemSet uint8

// problemOrder lists the problems Parse reports, in bit order (and List's order).
var problemOrder = [...]Problem{
	{"", ReasonMalformedJSON},
	{fieldHolder, ReasonBadHolder},
	{fieldDuration, ReasonBadDuration},
	{fieldAcquire, ReasonBadTime},
	{fieldRenew, ReasonBadTime},
	{fieldTransitions, ReasonBadTransitions},
}

// Add returns s with p.
func (s ProblemSet) Add(p Problem) ProblemSet {
	for i, f := range problemOrder {
		if f == p {
			return s | 1<<i
		}
	}
	return s | 1 // unreachable: Parse reports only the problems above; malformed JSON then
}

// List returns the problems in s in a fixed order; nil for the empty set.
func (s ProblemSet) List() []Problem {
	if s == 0 {
		return nil
	}
	var out []Problem
	for i, f := range problemOrder {
		if s&(1<<i) != 0 {
			out = append(out, f)
		}
	}
	return out
}
