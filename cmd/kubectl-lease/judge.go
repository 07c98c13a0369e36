package main

import (
	"slices"
	"time"

	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// The plugin never judges a lock itself: the exporter's informer observes a record (read.go)
// and api.Summarize judges it (lock.Judge, StandingAt, RenewAge), as the exporter's JSON API
// does. What only a one-shot read adds is named apart.

// skewProblem is lock.Judge's word for a skewed holder, so the plugin's for a renewTime in the
// API server's future is the exporter's for a skew it measured.
var skewProblem = lock.Judgement{Held: true, Skewed: true}.Problems()[0]

// judged is one lock as kubectl lease shows it: the exporter's JSON of it, and what -o wide adds.
type judged struct {
	api.Lease
	// RenewTimeAheadSeconds is how far renewTime lies ahead of the clock that judged
	// (lock.RenewTimeAhead): a one-shot read's only sight of a skewed holder; null otherwise.
	RenewTimeAheadSeconds *float64 `json:"renew_time_ahead_seconds"`
	Strategy              string   `json:"strategy"`
	PreferredHolder       string   `json:"preferred_holder"`
	Owner                 string   `json:"owner"` // the owner reference, "Kind/name"; "" when none
}

// judge judges rec at at as the exporter's JSON API does. oneShot (not -w, which measures
// skew on the renewals it watches) gives how far any renewTime lies ahead of the judging
// clock, and names a held lock's holder skewed, and the lock not healthy, when that is beyond
// what the lease tolerates.
func judge(rec *lock.Lease, at time.Time, oneShot bool) judged {
	j := judged{Lease: api.Summarize(rec, at), Strategy: rec.Strategy(), PreferredHolder: rec.PreferredHolder()}
	if kind, name := rec.Owner(); name != "" {
		j.Owner = kind + "/" + name
	}
	if _, measured := rec.ClockSkew(); oneShot && !measured {
		if ahead, beyond := rec.RenewTimeAhead(at.UnixMicro()); ahead > 0 {
			j.RenewTimeAheadSeconds = ptr.To(ahead.Seconds())
			if beyond && j.Held {
				j.Healthy, j.Problems = false, append(j.Problems, skewProblem)
			}
		}
	}
	return j
}

func (j *judged) skewed() bool { return slices.Contains(j.Problems, skewProblem) }
