// Package api holds the status page's JSON answers (GET /api/v1/leases and
// /api/v1/leases/{namespace}/{name}) and the converters from the lock records to them: the
// types the pages render, the JSON handler writes and kubectl lease prints and reads back
// from an exporter. It imports only lock and the standard library, so the plugin links no
// HTML templates. docs/status-page.md documents every field.
package api

import "time"

// List is the answer of GET /api/v1/leases and what GET /leases renders.
type List struct {
	// Synced is false until the initial list of every watched namespace is cached; until
	// then Leases is empty, as /metrics exports no per-lease series.
	Synced bool `json:"synced"`
	// EvaluatedAt is when held and renew ages are judged: now while the watch is open,
	// frozen at the moment it broke otherwise (Stale).
	EvaluatedAt time.Time `json:"evaluated_at"`
	Stale       bool      `json:"stale"`
	Leases      []Lease   `json:"leases"`
	// Deleted are the locks seen deleted within the retention, newest first; a recreated
	// lock is in both lists.
	Deleted []Deleted `json:"deleted"`
	// NodeHeartbeats sums up the node heartbeats the filter selects (its health filter
	// aside), as the list page draws them; null when there are none.
	NodeHeartbeats *NodeHeartbeats `json:"node_heartbeats"`
}

// NodeHeartbeats is the node-heartbeat class summed up (lock.Summary, as the class metrics):
// how many, how many stand where, and how many by renew age.
type NodeHeartbeats struct {
	Total int `json:"total"`
	// Standings count them by standing, as lease_class_locks{class="node-heartbeat"} does:
	// on_time, lagging, expired, released.
	Standings map[string]int `json:"standings"`
	// Overdue counts those not on time (lagging, expired or released).
	Overdue int `json:"overdue"`
	// RenewAgeBuckets count the heartbeats renewed more than the previous bucket's
	// le_seconds ago and at most this one's; the last, le_seconds null, the older ones.
	RenewAgeBuckets []AgeBucket `json:"renew_age_buckets"`
	// NeverRenewed counts heartbeats whose record has no renewTime.
	NeverRenewed int `json:"never_renewed"`
}

// AgeBucket is one bar of the renew-age histogram.
type AgeBucket struct {
	LeSeconds *float64 `json:"le_seconds"`
	Count     int      `json:"count"`
}

// Lease is one lock as the exporter judges it at EvaluatedAt. Optional fields are null when
// the lock lacks them.
type Lease struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Class     string `json:"class"`
	Holder    string `json:"holder"`
	Held      bool   `json:"held"`
	// Standing is lock.StandingAt's: on_time, lagging, expired or released, the standings
	// lease_class_locks counts.
	Standing string `json:"standing"`
	// Healthy and Problems are lock.Judge's: false when the lock is not held, or is held
	// by a holder whose clock skew exceeds what LeaseHolderClockSkew tolerates
	// (lock.Judge); Problems says which.
	Healthy  bool     `json:"healthy"`
	Problems []string `json:"problems"`
	// RenewAgeSeconds is EvaluatedAt minus ObservedRenewTime.
	RenewAgeSeconds        *float64   `json:"renew_age_seconds"`
	ObservedRenewTime      *time.Time `json:"observed_renew_time"`
	HolderClockSkewSeconds *float64   `json:"holder_clock_skew_seconds"`
	LeaseDurationSeconds   *int32     `json:"lease_duration_seconds"`
	LeaseTransitions       *int32     `json:"lease_transitions"`
	ObservedHolderChanges  uint32     `json:"observed_holder_changes"`
	// LastHolderChange is the start or end of the newest tenure in the history; null for
	// locks that keep none.
	LastHolderChange *time.Time `json:"last_holder_change"`
	RenewTime        *time.Time `json:"renew_time"`
	AcquireTime      *time.Time `json:"acquire_time"`
}

// Detail is the answer of GET /api/v1/leases/{namespace}/{name}.
type Detail struct {
	Lease
	UID       string     `json:"uid"`
	FirstSeen time.Time  `json:"first_seen"`
	Expiry    *time.Time `json:"expiry"`
	// History is null for locks that keep none (node heartbeats by default).
	History *History `json:"history"`
	// Deleted is set when the lock is gone and this is its tombstone: the fields above are
	// its last state, judged when it went.
	Deleted *Deleted `json:"deleted"`
	// PreviousIncarnation is, for a lock deleted and recreated (a new UID) within the
	// retention, the incarnation before this one: a recreation, not a holder change.
	PreviousIncarnation *Deleted `json:"previous_incarnation"`
	// Strategy and PreferredHolder are the Lease's coordinated-election fields, "" unset.
	Strategy        string `json:"strategy"`
	PreferredHolder string `json:"preferred_holder"`
	// Candidates are the Lease's LeaseCandidates; null when LeaseCandidates are not watched.
	Candidates []Candidate `json:"candidates"`
}

// History is a lock's recent election history, oldest first.
type History struct {
	Tenures []Tenure `json:"tenures"`
	// RenewalIntervalsSeconds are the intervals between the last observed renewals.
	RenewalIntervalsSeconds []float64 `json:"renewal_intervals_seconds"`
	// LeaderlessSince is when the lock last stopped being held, while nobody holds it.
	LeaderlessSince *time.Time `json:"leaderless_since"`
}

// Tenure is one holder's continuous holding, as the exporter observed it or, marked Rebuilt,
// read back from its Events.
type Tenure struct {
	Holder string `json:"holder"`
	// From is absent when unknown: a tenure rebuilt from Events that showed it end but
	// neither begin nor last (HeldSeconds is then null).
	From time.Time  `json:"from,omitzero"`
	To   *time.Time `json:"to"`
	// LastRenew is the last renewal the exporter observed (for a release, the release).
	LastRenew time.Time `json:"last_renew"`
	// Ended is "released", "expired", "taken_over", "unknown", or "" while it lasts.
	Ended string `json:"ended"`
	// SeenLive is false when the start arrived in a list or watch replay: From is then the
	// holder's acquireTime corrected by its measured clock skew.
	SeenLive bool `json:"seen_live"`
	// Rebuilt says the exporter did not observe this tenure but read it back from the Events
	// its writer wrote (--events): before this process started, or on another replica.
	Rebuilt     bool     `json:"rebuilt"`
	HeldSeconds *float64 `json:"held_seconds"`
	// GapBeforeSeconds is how long nobody held the lock before this tenure began; null for
	// the first tenure kept.
	GapBeforeSeconds *float64 `json:"gap_before_seconds"`
}

// Deleted is a lock incarnation (one UID) the exporter saw deleted within the retention
// (--history.deleted-retention): who held it and when it went.
type Deleted struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Class     string `json:"class"`
	UID       string `json:"uid"`
	// Holder is the holder its last record named, "" when nobody held it.
	Holder string `json:"holder"`
	// Held says the holder's lease was still valid when the lock went.
	Held bool `json:"held"`
	// DeletedAt is when the exporter saw it go. SeenLive false: noticed in a relist or a
	// watch replay, so it went between LastObservedChange and DeletedAt.
	DeletedAt time.Time `json:"deleted_at"`
	SeenLive  bool      `json:"seen_live"`
	// LastObservedChange is when the exporter last saw its record change (the observed renew
	// time); null without a renewTime.
	LastObservedChange *time.Time `json:"last_observed_change"`
	// RecreatedAt is when the exporter first saw the lock's next incarnation (a new UID); null
	// while there is none.
	RecreatedAt *time.Time `json:"recreated_at"`
	// History is the incarnation's history, its last tenure ended "deleted" (or "expired");
	// only in a detail's previous_incarnation, and null for locks that keep none.
	History *History `json:"history,omitempty"`
}

// Candidate is one LeaseCandidate of a coordinated election (KEP-4355): a component that
// stands for the Lease, the versions it runs and how recently it renewed.
type Candidate struct {
	Name             string `json:"name"`
	BinaryVersion    string `json:"binary_version"`
	EmulationVersion string `json:"emulation_version"`
	Strategy         string `json:"strategy"`
	// Fresh is lock.Candidate.Fresh: seen renewing within lock.CandidateFreshness (10 min).
	Fresh             bool       `json:"fresh"`
	RenewTime         *time.Time `json:"renew_time"`
	ObservedRenewTime *time.Time `json:"observed_renew_time"`
	PingTime          *time.Time `json:"ping_time"`
	// Preferred: the API server names this candidate the Lease's spec.preferredHolder.
	Preferred bool `json:"preferred"`
}
