package statuspage

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// A large cluster has one node-heartbeat Lease per node: tens of thousands of rows that say
// "renewed seconds ago" and hide the few that matter. The list page sums the class up
// instead: how many, how many late and by how much, the late ones first, and the renew ages
// as a histogram. Its table lists them only when the class filter asks for them.

// maxLateNodes bounds the late heartbeats listed on the page (the most overdue first); the
// JSON API and ?class=node-heartbeat&unhealthy=1 give all of them.
const maxLateNodes = 50

type nodeSummary struct {
	Total, Late int
	// LateNodes are the late heartbeats, the most overdue first, at most maxLateNodes.
	LateNodes []lateNode
	Buckets   []bucket
	// ListURL lists every heartbeat; LateURL the late ones.
	ListURL, LateURL string
	// late collects them all before the most overdue are kept.
	late []lateNode
	// counts are the histogram's: the buckets, then over an hour, then never renewed.
	counts [len(lock.RenewAgeBuckets) + 2]int
}

type lateNode struct {
	Name, URL, Holder string
	// Age and LateBy: since its renewal was seen, and past its lease duration; "never
	// renewed" for a Lease without renewTime.
	Age, LateBy string
	ageµ        int64
}

// bucket is a bar of the histogram in viewBox units (600 × 150).
type bucket struct {
	Label, Title string
	Count        int
	X, Y, W, H   float64
	// Late: renewals this old are past a kubelet's 40 s lease.
	Late bool
}

// add counts the heartbeat l, judged at atµ.
func (s *nodeSummary) add(l *lock.Lease, atµ int64, held bool) {
	s.Total++
	age, renewed := l.RenewAge(atµ)
	if renewed {
		s.counts[lock.RenewAgeBucket(age)]++
	} else {
		s.counts[len(s.counts)-1]++
	}
	if held {
		return
	}
	s.Late++
	n := lateNode{Name: l.Name(), URL: lockURL(l.Namespace(), l.Name(), l.Kind().String()), Holder: l.Holder, Age: "never renewed", ageµ: math.MaxInt64}
	if renewed {
		a := float64(age) / 1e6
		n.Age, n.ageµ = seconds(&a), age
		switch {
		case l.Holder == "":
			n.LateBy = "released" // not held, though maybe renewed a moment ago
		case l.HasDuration:
			by := max(0, a-float64(l.DurationSeconds))
			n.LateBy = seconds(&by)
		}
	}
	s.late = append(s.late, n)
}

// finish keeps the most overdue late heartbeats and draws the histogram.
func (s *nodeSummary) finish() {
	slices.SortFunc(s.late, func(a, b lateNode) int {
		return cmp.Or(cmp.Compare(b.ageµ, a.ageµ), cmp.Compare(a.Name, b.Name))
	})
	s.LateNodes = s.late[:min(len(s.late), maxLateNodes)]
	s.ListURL, s.LateURL = "/leases?class=node-heartbeat", "/leases?class=node-heartbeat&unhealthy=1"
	counts := s.counts[:]
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
			b.Late = lock.RenewAgeBuckets[i] > 40*time.Second
		case i == len(lock.RenewAgeBuckets):
			b.Label, b.Title, b.Late = ">"+prev, fmt.Sprintf("%d renewed over %s ago", c, prev), true
		default:
			b.Label, b.Title, b.Late = "never", fmt.Sprintf("%d never renewed", c), true
		}
		if top > 0 {
			b.H = math.Log10(float64(c)+1) / top * plot
		}
		b.Y = 20 + plot - b.H
		s.Buckets = append(s.Buckets, b)
	}
}

// json is the summary as the JSON list carries it.
func (s *nodeSummary) json() *NodeHeartbeats {
	out := &NodeHeartbeats{Total: s.Total, Late: s.Late, RenewAgeBuckets: []AgeBucket{}}
	for i, b := range s.Buckets {
		switch {
		case i < len(lock.RenewAgeBuckets):
			out.RenewAgeBuckets = append(out.RenewAgeBuckets, AgeBucket{LeSeconds: ptr(lock.RenewAgeBuckets[i].Seconds()), Count: b.Count})
		case i == len(lock.RenewAgeBuckets):
			out.RenewAgeBuckets = append(out.RenewAgeBuckets, AgeBucket{Count: b.Count})
		default:
			out.NeverRenewed = b.Count
		}
	}
	return out
}

// short writes 40s, 1m, 2m, 1h.
func short(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	default:
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
}
