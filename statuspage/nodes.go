package statuspage

import (
	"fmt"
	"math"
	"slices"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// A large cluster has one node-heartbeat Lease per node: tens of thousands of rows that say
// "renewed seconds ago" and hide the few that matter. The list page sums the class up
// instead, with lock.Summary, as lease_class_locks and lease_class_renew_age_seconds do: how
// many stand where (the same four standings), the overdue ones first, and the renew ages as
// a histogram. Its table lists them only when the class filter asks for them.

// maxOverdueNodes bounds the overdue heartbeats listed on the page (the most overdue first);
// the JSON API and ?class=node-heartbeat list all of them.
const maxOverdueNodes = 50

type nodeSummary struct {
	lock.Summary
	// Standings are the counts by standing, in lock.Standings' order.
	Standings []standingCount
	// OverdueNodes are the heartbeats not on time (OverdueTotal of them), the most overdue
	// first, at most maxOverdueNodes.
	OverdueNodes []overdueNode
	Buckets      []bucket
	// ListURL lists every heartbeat; UnhealthyURL those not held (expired or released).
	ListURL, UnhealthyURL string
	// overdue collects them all before the most overdue are kept; at is when they were
	// judged (Unix µs).
	overdue []overdueNode
	at      int64
}

type standingCount struct {
	Standing string
	Count    int
}

type overdueNode struct {
	Name, URL, Holder, Standing string
	// Age is how long ago its renewal was seen, "never renewed" for a Lease without
	// renewTime; PastExpiry how long ago its lease ran out (lock.PastExpiry), "" unless it
	// expired.
	Age, PastExpiry string
	lease           *lock.Lease
}

// bucket is a bar of the histogram in viewBox units (600 × 150).
type bucket struct {
	Label, Title string
	Count        int
	X, Y, W, H   float64
	// Overdue: some heartbeat counted in it is not on time.
	Overdue bool
}

// add counts the heartbeat l, judged at atµ.
func (s *nodeSummary) add(l *lock.Lease, atMicros int64) {
	st := s.Summary.Add(l, atMicros)
	if !st.Overdue() {
		return
	}
	n := overdueNode{Name: l.Name(), URL: lockURL(l.Namespace(), l.Name(), l.Kind().String()), Holder: l.Holder,
		Standing: st.String(), Age: "never renewed", lease: l}
	if age, ok := l.RenewAge(atMicros); ok {
		a := float64(age) / 1e6
		n.Age = seconds(&a)
	}
	if past, ok := l.PastExpiry(atMicros); ok {
		p := float64(past) / 1e6
		n.PastExpiry = seconds(&p)
	}
	s.overdue, s.at = append(s.overdue, n), atMicros
}

// finish keeps the most overdue heartbeats and draws the histogram.
func (s *nodeSummary) finish() {
	rank := lock.MoreOverdue(s.at)
	slices.SortFunc(s.overdue, func(a, b overdueNode) int { return rank(a.lease, b.lease) })
	s.OverdueNodes = s.overdue[:min(len(s.overdue), maxOverdueNodes)]
	s.ListURL, s.UnhealthyURL = "/leases?class=node-heartbeat", "/leases?class=node-heartbeat&unhealthy=1"
	for _, st := range lock.Standings {
		s.Standings = append(s.Standings, standingCount{st.String(), s.Summary.Standings[st]})
	}
	// The histogram's bars: the buckets, then over an hour, then never renewed.
	counts := append(slices.Clone(s.Ages[:]), s.NeverRenewed)
	top := math.Log10(float64(slices.Max(counts)) + 1)
	const width, plot = 600.0, 110.0
	w := width / float64(len(counts))
	prev := "0s"
	for i, c := range counts {
		b := bucket{Count: c, X: float64(i)*w + 2, W: w - 4}
		switch {
		case i < len(lock.RenewAgeBuckets):
			b.Label = "≤" + short(lock.RenewAgeBuckets[i])
			b.Title = fmt.Sprintf("%d renewed %s to %s ago", c, prev, short(lock.RenewAgeBuckets[i]))
			prev = short(lock.RenewAgeBuckets[i])
		case i == len(lock.RenewAgeBuckets):
			b.Label, b.Title = ">"+prev, fmt.Sprintf("%d renewed over %s ago", c, prev)
		default:
			// A record without renewTime stands expired.
			b.Label, b.Title, b.Overdue = "never", fmt.Sprintf("%d never renewed", c), c > 0
		}
		if i < len(s.Summary.Overdue) && s.Summary.Overdue[i] > 0 {
			b.Overdue = true
			b.Title += fmt.Sprintf(", %d of them overdue", s.Summary.Overdue[i])
		}
		if top > 0 {
			b.H = math.Log10(float64(c)+1) / top * plot
		}
		b.Y = 20 + plot - b.H
		s.Buckets = append(s.Buckets, b)
	}
}

// json is the summary as the JSON list carries it.
func (s *nodeSummary) json() *api.NodeHeartbeats { return api.SummaryJSON(&s.Summary) }
