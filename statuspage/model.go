package statuspage

import (
	"cmp"
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/informer/lock"
)

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

// Tenure is one holder's continuous holding, as the exporter observed it.
type Tenure struct {
	Holder string     `json:"holder"`
	From   time.Time  `json:"from"`
	To     *time.Time `json:"to"`
	// LastRenew is the last renewal the exporter observed (for a release, the release).
	LastRenew time.Time `json:"last_renew"`
	// Ended is "released", "expired", "taken_over", "unknown", or "" while it lasts.
	Ended string `json:"ended"`
	// SeenLive is false when the start arrived in a list or watch replay: From is then the
	// holder's acquireTime corrected by its measured clock skew.
	SeenLive    bool    `json:"seen_live"`
	HeldSeconds float64 `json:"held_seconds"`
	// GapBeforeSeconds is how long nobody held the lock before this tenure began; null for
	// the first tenure kept.
	GapBeforeSeconds *float64 `json:"gap_before_seconds"`
}

// Filter selects leases; its zero value selects all.
type Filter struct {
	Namespace, Class, Kind string
	UnhealthyOnly          bool
}

func (f Filter) match(l *Lease) bool {
	return f.matchLock(l.Namespace, l.Class, l.Kind) && (!f.UnhealthyOnly || !l.Healthy)
}

// matchLock matches the lock's address and class, not its health.
func (f Filter) matchLock(namespace, class, kind string) bool {
	return (f.Namespace == "" || f.Namespace == namespace) && (f.Class == "" || f.Class == class) &&
		(f.Kind == "" || f.Kind == kind)
}

// list judges every lock of view matching f at informer.JudgedAt(view, now), sorted by
// namespace, name and kind.
func list(view informer.View, now time.Time, f Filter) List {
	at := informer.JudgedAt(view, now)
	out := List{Synced: view.HasSynced(), EvaluatedAt: at.UTC(), Stale: informer.Staleness(at, now) > 0, Leases: []Lease{}, Deleted: []Deleted{}}
	if !out.Synced {
		return out
	}
	out.Deleted = deletedList(view, tombstones(view), f)
	nodes := &nodeSummary{}
	view.Range(func(l *lock.Lease) {
		s := summarize(l, at)
		if f.match(&s) {
			out.Leases = append(out.Leases, s)
		}
		if l.Class == lock.ClassNodeHeartbeat && f.matchLock(s.Namespace, s.Class, s.Kind) {
			nodes.add(l, at.UnixMicro())
		}
	})
	slices.SortFunc(out.Leases, func(a, b Lease) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind))
	})
	if nodes.Total() > 0 {
		nodes.finish()
		out.NodeHeartbeats = nodes.json()
	}
	return out
}

// find returns the detail of the lock namespace/name of kind judged at at (from
// informer.JudgedAt), with its previous incarnation if it was recreated; for a lock that
// went, its tombstone's; false if the view has neither.
func find(view informer.View, at time.Time, namespace, name, kind string) (Detail, bool) {
	if !view.HasSynced() {
		return Detail{}, false
	}
	var found *lock.Lease
	view.Range(func(l *lock.Lease) {
		if l.Namespace() == namespace && l.Name() == name && l.Kind().String() == kind {
			found = l
		}
	})
	tombs := tombstones(view)
	if found != nil {
		d := detail(found, at)
		d.PreviousIncarnation = previousIncarnation(view, tombs, found)
		d.Strategy, d.PreferredHolder = found.Strategy(), found.PreferredHolder()
		if found.Kind() == lock.KindLease {
			d.Candidates = candidatesOf(view, namespace, name, d.PreferredHolder, at)
		}
		return d, true
	}
	if t := newestTombstone(tombs, lockKey{kind, namespace, name}); t != nil {
		return buried(view, tombs, t), true
	}
	return Detail{}, false
}

func summarize(l *lock.Lease, at time.Time) Lease {
	atµ := at.UnixMicro()
	j := lock.Judge(l, atµ)
	s := Lease{
		Namespace: l.Namespace(), Name: l.Name(), Kind: l.Kind().String(), Class: l.Class.String(),
		Holder: l.Holder, Held: j.Held, Healthy: j.Healthy(), Problems: j.Problems(),
		ObservedHolderChanges: l.ObservedHolderChanges,
	}
	if l.HasRenewTime {
		s.RenewTime = timeOf(l.RenewTime)
		s.ObservedRenewTime = timeOf(l.ObservedRenewTime)
		age, _ := l.RenewAge(atµ)
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

func detail(l *lock.Lease, at time.Time) Detail {
	d := Detail{Lease: summarize(l, at), UID: l.UID.String(), FirstSeen: *timeOf(l.FirstSeen)}
	if expiry, ok := l.Expiry(); ok {
		d.Expiry = timeOf(expiry)
	}
	if h := l.History(); h != nil {
		d.History = history(h.Snapshot(), l, at, d.Held)
	}
	return d
}

// history formats snap, l's history, judged at at, when l is held or not.
func history(snap lock.HistorySnapshot, l *lock.Lease, at time.Time, held bool) *History {
	out := &History{Tenures: []Tenure{}, RenewalIntervalsSeconds: []float64{}}
	for _, ms := range snap.RenewalIntervals {
		out.RenewalIntervalsSeconds = append(out.RenewalIntervalsSeconds, float64(ms)/1e3)
	}
	atµ := at.UnixMicro()
	for i, t := range snap.Tenures {
		end := t.To
		if t.Ended == lock.Holding {
			end = atµ
		}
		tn := Tenure{Holder: t.Holder, From: *timeOf(t.From), LastRenew: *timeOf(t.LastRenew), Ended: t.Ended.String(),
			SeenLive: t.Live, HeldSeconds: max(0, float64(end-t.From)/1e6)}
		if t.Ended != lock.Holding {
			tn.To = timeOf(t.To)
		}
		if i > 0 && snap.Tenures[i-1].To != 0 {
			tn.GapBeforeSeconds = ptr(max(0, float64(t.From-snap.Tenures[i-1].To)/1e6))
		}
		out.Tenures = append(out.Tenures, tn)
	}
	if !held && len(snap.Tenures) > 0 {
		last := snap.Tenures[len(snap.Tenures)-1]
		since := last.To
		if last.Ended == lock.Holding {
			since, _ = l.Expiry()
		}
		if since != 0 {
			out.LeaderlessSince = timeOf(since)
		}
	}
	return out
}

func timeOf(µs int64) *time.Time {
	t := time.UnixMicro(µs).UTC()
	return &t
}

func ptr[T any](v T) *T { return &v }
