package main

import (
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// The plugin never judges a lock itself: a record is observed by the exporter's informer (its
// stores' lock.Observation, read.go), and judged by api.Summarize (lock.Judge, StandingAt,
// RenewAge), as the exporter's JSON API judges it. What a one-shot read adds is named apart.

// skewProblem is the problem lock.Judge names for a skewed holder, so the plugin's words for
// a renewTime in the API server's future are the exporter's for a skew it measured.
var skewProblem = lock.Judgement{Held: true, Skewed: true}.Problems()[0]

// judged is one lock as kubectl lease shows it: the exporter's JSON of it, judged at the
// same moment by the same code, and the fields the list's wide columns add.
type judged struct {
	api.Lease
	// RenewTimeAheadSeconds is how far renewTime lies ahead of the clock that judged
	// (lock.RenewTimeAhead): a one-shot read's only sight of a skewed holder; null otherwise.
	RenewTimeAheadSeconds *float64 `json:"renew_time_ahead_seconds"`
	Strategy              string   `json:"strategy"`
	PreferredHolder       string   `json:"preferred_holder"`
	// Owner is the owner reference, "Kind/name", "" when none.
	Owner string `json:"owner"`

	rec *lock.Lease
}

// judge judges the observed record rec at at, as the exporter's JSON API does. oneShot adds
// what only a single read says: a renewTime ahead of the judging clock, named skewed, where
// the exporter (and -w) measure a holder's skew on the renewals they watch.
func judge(rec *lock.Lease, at time.Time, oneShot bool) judged {
	j := judged{Lease: api.Summarize(rec, at), Strategy: rec.Strategy(), PreferredHolder: rec.PreferredHolder(), rec: rec}
	if kind, name := rec.Owner(); name != "" {
		j.Owner = kind + "/" + name
	}
	if _, measured := rec.ClockSkew(); oneShot && !measured {
		// Skew not measured on live renewals: a renewTime in the judging clock's future is
		// the one skewed holder a single read can name, and it is not called healthy.
		if ahead, beyond := rec.RenewTimeAhead(at.UnixMicro()); ahead > 0 {
			s := ahead.Seconds()
			j.RenewTimeAheadSeconds = &s
			if beyond && j.Held {
				j.Healthy = false
				j.Problems = append(j.Problems, skewProblem)
			}
		}
	}
	return j
}

// skewed says whether the holder is judged skewed, measured or by a renewTime ahead.
func (j *judged) skewed() bool { return slices.Contains(j.Problems, skewProblem) }
