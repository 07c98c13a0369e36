package lock

// Summary sums a class of locks up at one moment, in one pass: how many stand where, how
// old their renewals are, and how many were never renewed. The class metrics
// (lease_class_locks, lease_class_renew_age_seconds) and the status page's node-heartbeat
// summary both read it, so the page and the metrics count alike.
type Summary struct {
	Standings [NumStandings]int
	// Ages counts the locks with a renewTime by RenewAgeBucket (not cumulative; the last
	// counts the ages beyond every bound); Overdue counts those of them not on time.
	Ages, Overdue [len(RenewAgeBuckets) + 1]int
	// AgeSum is the sum of the counted renew ages, in µs.
	AgeSum int64
	// NeverRenewed counts the locks whose record has no renewTime (they stand expired).
	NeverRenewed int
}

// Add counts l as judged at at (Unix µs, from JudgedAt) and returns its standing.
func (s *Summary) Add(l *Lease, at int64) Standing {
	st := l.StandingAt(at)
	s.Standings[st]++
	age, ok := l.RenewAge(at)
	if !ok {
		s.NeverRenewed++
		return st
	}
	b := RenewAgeBucket(age)
	s.Ages[b]++
	if st.Overdue() {
		s.Overdue[b]++
	}
	s.AgeSum += age
	return st
}

// Total is the number of locks counted.
func (s *Summary) Total() int {
	n := 0
	for _, c := range s.Standings {
		n += c
	}
	return n
}

// OverdueTotal is the number of locks counted that are not on time.
func (s *Summary) OverdueTotal() int { return s.Total() - s.Standings[StandingOnTime] }

// Summaries are every class's Summary, indexed by Class.
type Summaries [NumClasses]Summary

// Add counts l in its class's summary and returns its standing.
func (s *Summaries) Add(l *Lease, at int64) Standing { return s[l.Class].Add(l, at) }
