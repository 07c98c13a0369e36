package informer

import "time"

// As of when the locks of a view are judged is a property of the view (View.JudgedAt), not
// of a lock; what a lock's judgement is at that moment is lock/judgement.go's.

// Staleness is how long before now the judgement time at lies: 0 while the view is current.
func Staleness(at, now time.Time) time.Duration { return max(now.Sub(at), 0) }
