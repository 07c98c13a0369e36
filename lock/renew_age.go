package lock

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
)

// RenewAgeBuckets are the upper bounds of every renew-age histogram: the status page's node
// summary and lease_class_renew_age_seconds, so the page and the metric bin alike. A kubelet's
// lease lasts 40 s and it renews every 10 s, so the first four are a healthy node's.
var RenewAgeBuckets = [...]time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 40 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour}

// RenewAge returns how long before at (Unix µs) the exporter saw l's record change, never
// negative; ok is false for a record without renewTime, which has no age.
func (l *Lease) RenewAge(at int64) (micros int64, ok bool) {
	if !l.HasRenewTime {
		return 0, false
	}
	return max(0, at-l.ObservedRenewTime), true
}

// RenewAgeBucket returns the index in RenewAgeBuckets of the first bound at or above age (µs),
// len(RenewAgeBuckets) beyond the last: the bucket every histogram counts the age in.
func RenewAgeBucket(micros int64) int {
	i, _ := slices.BinarySearch(RenewAgeBuckets[:], time.Duration(micros)*time.Microsecond)
	return i
}

// MoreOverdue orders locks judged at at (Unix µs) as lists of overdue node heartbeats show
// them, the most overdue first: the longest since its renewal first (never renewed first of
// all), then by name. The status page and kubectl lease rank them with it alike.
func MoreOverdue(at int64) func(a, b *Lease) int {
	age := func(l *Lease) int64 {
		if a, ok := l.RenewAge(at); ok {
			return a
		}
		return math.MaxInt64
	}
	return func(a, b *Lease) int { return cmp.Or(cmp.Compare(age(b), age(a)), strings.Compare(a.Name(), b.Name())) }
}
