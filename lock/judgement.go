package lock

import "time"

// The judgement of a lock lives here and only here: whether it is held, whether its holder's
// clock is skewed beyond what it tolerates, and whether a LeaseCandidate is fresh, at a given
// moment (as of when is the view's: informer.View.JudgedAt). The metrics (collector), the status
// page (statuspage) and the alert rules (judgement_rules_test.go runs the rules against these
// functions) read it from here, so the page, the metrics and the alerts cannot disagree.

// Expiry returns when, by the exporter's clock, the Lease expires unless its record changes
// again: ObservedRenewTime plus the lease duration (Unix µs); ok is false without a renewTime
// or duration, which the API server's lease garbage collector also counts as expired.
func (l *Lease) Expiry() (at int64, ok bool) {
	if !l.HasRenewTime || !l.HasDuration {
		return 0, false
	}
	return l.ObservedRenewTime + int64(l.DurationSeconds)*1e6, true
}

// Held reports whether the Lease has a holder and is not expired at time at (Unix µs),
// judged as client-go's electors judge it: from when the record was seen to change, never by
// comparing the holder's clock with ours. It is Judge's Held, alone for the scrape's hot path.
func (l *Lease) Held(at int64) bool {
	expiry, ok := l.Expiry()
	return l.Holder != "" && ok && expiry >= at
}

// lateFraction is how much of its lease duration a held lock may go without a renewal seen
// before it counts as lagging: well past a healthy cadence (client-go renews every 2 s of 15 s,
// the kubelet every 10 s of 40 s), and before client-go's renew deadline (2/3), after which
// the leader gives up. LeaseRenewalLagging's durationFraction is the same number
// (judgement_rules_test.go holds it to this).
const lateFraction = 0.5

// Standing is where a lock stands at one moment, the states the per-class counts
// (lease_class_locks) sum up. Every lock is in exactly one.
type Standing uint8

const (
	// StandingOnTime: held, and renewed within lateFraction of its lease duration.
	StandingOnTime Standing = iota
	// StandingLagging: still held, but not seen renewed for over lateFraction of its lease duration.
	StandingLagging
	// StandingExpired: a holder whose lease ran out, or a record without renewTime or duration.
	StandingExpired
	// StandingReleased: no holder.
	StandingReleased
	// NumStandings is the number of standings.
	NumStandings
)

// Standings lists every Standing, so the collector can report zero counts too.
var Standings = [NumStandings]Standing{StandingOnTime, StandingLagging, StandingExpired, StandingReleased}

// String is the standing's label value.
func (s Standing) String() string {
	switch s {
	case StandingOnTime:
		return "on_time"
	case StandingLagging:
		return "lagging"
	case StandingExpired:
		return "expired"
	case StandingReleased:
		return "released"
	}
	return "unknown"
}

// Overdue reports whether a lock of standing s is not on time: lagging, expired or released,
// the node heartbeats lease_overdue_observed_renew_timestamp_seconds names and the status
// page lists.
func (s Standing) Overdue() bool { return s != StandingOnTime }

// PastExpiry returns how long before at (Unix µs) l expired, judged as Held judges it; ok is
// false while it has not (held, or released before), and for a record without a renewTime or
// a duration, which never had an expiry to pass.
func (l *Lease) PastExpiry(at int64) (micros int64, ok bool) {
	expiry, has := l.Expiry()
	if !has || l.Holder == "" || expiry >= at {
		return 0, false
	}
	return at - expiry, true
}

// StandingAt judges l at time at (Unix µs, from JudgedAt). It does not allocate.
func (l *Lease) StandingAt(at int64) Standing {
	switch {
	case l.Holder == "":
		return StandingReleased
	case !l.Held(at):
		return StandingExpired
	case float64(at-l.ObservedRenewTime) > lateFraction*float64(l.DurationSeconds)*1e6:
		return StandingLagging
	}
	return StandingOnTime
}

// The holder clock skew a lock tolerates: skewToleranceFraction of its lease duration, at
// least minSkewTolerance (watch latency on a loaded API server) and at most maxSkewTolerance
// (alerts/lease-exporter.rules.yml, LeaseHolderClockSkew, says why). judgement_rules_test.go
// holds the rule file's thresholds (PromQL literals, as Prometheus loads the file) to them.
const (
	skewToleranceFraction = 0.25
	minSkewTolerance      = 2 * time.Second
	maxSkewTolerance      = 30 * time.Second
)

// skewTolerance is how far a holder's clock may be from the exporter's, either way, on a lock
// whose lease lasts durationSeconds, before the holder counts as skewed.
func skewTolerance(durationSeconds int32) time.Duration {
	d := time.Duration(skewToleranceFraction * float64(durationSeconds) * float64(time.Second))
	return min(max(d, minSkewTolerance), maxSkewTolerance)
}

// RenewTimeAhead reports how far l's renewTime lies ahead of at (Unix µs, by the clock of
// whoever reads the record), and whether by more than the holder clock skew the lock
// tolerates. A reader that sees the record once (kubectl lease) cannot measure the skew as
// the exporter does, on renewals seen live; a renewal stamped in its future is the one
// skewed holder it can still name.
func (l *Lease) RenewTimeAhead(at int64) (ahead time.Duration, beyond bool) {
	if !l.HasRenewTime || l.RenewTime <= at {
		return 0, false
	}
	ahead = time.Duration(l.RenewTime-at) * time.Microsecond
	return ahead, ahead > skewTolerance(l.DurationSeconds)
}

// Judgement is how the exporter judges one lock at one moment. Its zero value is a lock
// that is not held.
type Judgement struct {
	// Held is Lease.Held: a holder whose lease has not expired by the exporter's observation.
	Held bool
	// Skewed: held, and the holder's clock, measured on live renewals, is further from the
	// exporter's than SkewTolerance of the lease duration, either way.
	Skewed bool
}

// The problems a judgement names, as the status page shows them.
const (
	problemNotHeld = "not held"
	problemSkewed  = "holder clock skew over what the lease tolerates"
)

// Judge judges l at time at (Unix µs, from JudgedAt). It does not allocate.
func Judge(l *Lease, at int64) Judgement {
	j := Judgement{Held: l.Held(at)}
	if ms, ok := l.ClockSkew(); ok && j.Held {
		skew := time.Duration(ms) * time.Millisecond
		j.Skewed = max(skew, -skew) > skewTolerance(l.DurationSeconds)
	}
	return j
}

// Healthy reports whether the judgement names no problem.
func (j Judgement) Healthy() bool { return j.Held && !j.Skewed }

// Problems names what is wrong with the lock, empty (not nil) when it is healthy.
func (j Judgement) Problems() []string {
	problems := []string{}
	if !j.Held {
		problems = append(problems, problemNotHeld)
	}
	if j.Skewed {
		problems = append(problems, problemSkewed)
	}
	return problems
}

// CandidateFreshness is how long after the exporter saw a LeaseCandidate renew it still
// counts as fresh: two of client-go's renewal intervals (it renews every 5 minutes, and at
// once when the API server pings it), so one late renewal is not a stale candidate.
const CandidateFreshness = 10 * time.Minute

// Fresh reports whether the exporter saw the candidate renew within CandidateFreshness of at
// (Unix µs).
func (c *Candidate) Fresh(at int64) bool {
	return c.ObservedRenewTime != 0 && at-c.ObservedRenewTime <= CandidateFreshness.Microseconds()
}
