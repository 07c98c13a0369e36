package informer

import "time"

// As of when the locks of a view are judged is a property of the view, not of a lock; what a
// lock's judgement is at that moment is lock/judgement.go's.

// JudgedAt returns when the locks of v are judged at wall time now: now while the view is
// current, otherwise the moment it went stale (View.FreshAsOf), so a broken watch freezes the
// judgement where the view was last known to be true instead of letting every lock expire.
func JudgedAt(v View, now time.Time) time.Time { return v.FreshAsOf(now) }

// Staleness is how long before now the judgement time at lies: 0 while the view is current.
func Staleness(at, now time.Time) time.Duration { return max(now.Sub(at), 0) }
