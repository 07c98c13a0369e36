package api

import (
	"cmp"
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// The converters every answer is made of, here beside the types so that the status page and
// kubectl lease, which both print them, judge a record by one function and cannot disagree.

// Summarize is l as judged at at (lock.Judge, StandingAt, RenewAge): one lock of the JSON
// API's answers, and of kubectl lease's.
func Summarize(l *lock.Lease, at time.Time) Lease {
	atMicros := at.UnixMicro()
	j := lock.Judge(l, atMicros)
	s := Lease{
		Namespace: l.Namespace(), Name: l.Name(), Kind: l.Kind().String(), Class: l.Class.String(),
		Holder: l.Holder, Held: j.Held, Standing: l.StandingAt(atMicros).String(), Healthy: j.Healthy(), Problems: j.Problems(),
		ObservedHolderChanges: l.ObservedHolderChanges,
	}
	if age, ok := l.RenewAge(atMicros); ok {
		s.RenewTime = timeOf(l.RenewTime)
		s.ObservedRenewTime = timeOf(l.ObservedRenewTime)
		s.RenewAgeSeconds = ptr(float64(age) / 1e6)
	}
	if l.HasAcquireTime {
		s.AcquireTime = timeOf(l.AcquireTime)
	}
	if l.HasDuration {
		s.LeaseDurationSeconds = ptr(l.DurationSeconds)
	}
	if l.HasTransitions {
		s.LeaseTransitions = ptr(l.Transitions)
	}
	if ms, ok := l.ClockSkew(); ok {
		s.HolderClockSkewSeconds = ptr(float64(ms) / 1e3)
	}
	if at := l.LastHolderChange(); at != 0 {
		s.LastHolderChange = timeOf(at)
	}
	return s
}

// candidateJSON is c as the JSON API's detail carries it, judged at at; preferred is the
// Lease's spec.preferredHolder.
func candidateJSON(c *lock.Candidate, preferred string, at time.Time) Candidate {
	cd := Candidate{Name: c.Name(), BinaryVersion: c.BinaryVersion, EmulationVersion: c.EmulationVersion,
		Strategy: c.Strategy, Fresh: c.Fresh(at.UnixMicro()), Preferred: preferred != "" && c.Name() == preferred}
	if c.HasRenewTime {
		cd.RenewTime, cd.ObservedRenewTime = timeOf(c.RenewTime), timeOf(c.ObservedRenewTime)
	}
	if c.HasPingTime {
		cd.PingTime = timeOf(c.PingTime)
	}
	return cd
}

// CandidateSource is where Candidates finds a Lease's LeaseCandidates: the informer's cache.
type CandidateSource interface {
	WatchingCandidates() bool
	RangeCandidates(func(*lock.Candidate))
}

// Candidates returns the LeaseCandidates of the Lease namespace/name as the JSON API's detail
// carries them, judged at at, by name; nil when LeaseCandidates are not watched (so "none"
// can be told from "not watched"). preferred is the Lease's spec.preferredHolder.
func Candidates(src CandidateSource, namespace, name, preferred string, at time.Time) []Candidate {
	if !src.WatchingCandidates() {
		return nil
	}
	out := []Candidate{}
	src.RangeCandidates(func(c *lock.Candidate) {
		if c.Namespace() == namespace && c.LeaseName == name {
			out = append(out, candidateJSON(c, preferred, at))
		}
	})
	slices.SortFunc(out, func(a, b Candidate) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// SummaryJSON is a class summed up as the JSON list carries the node heartbeats: the list
// answer's node_heartbeats, and kubectl lease's.
func SummaryJSON(s *lock.Summary) *NodeHeartbeats {
	out := &NodeHeartbeats{Total: s.Total(), Standings: map[string]int{}, Overdue: s.OverdueTotal(), RenewAgeBuckets: []AgeBucket{},
		NeverRenewed: s.NeverRenewed}
	for _, st := range lock.Standings {
		out.Standings[st.String()] = s.Standings[st]
	}
	for i, c := range s.Ages {
		b := AgeBucket{Count: c}
		if i < len(lock.RenewAgeBuckets) {
			b.LeSeconds = ptr(lock.RenewAgeBuckets[i].Seconds())
		}
		out.RenewAgeBuckets = append(out.RenewAgeBuckets, b)
	}
	return out
}

// timeOf is a record's time (Unix µs) as the answers write it, in UTC.
func timeOf(micros int64) *time.Time {
	t := time.UnixMicro(micros).UTC()
	return &t
}

func ptr[T any](v T) *T { return &v }
