package statuspage

import (
	"cmp"
	"container/heap"
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// scan is the one pass over the view that both the JSON list and the list page are built
// from: every lock is judged once at one moment, counted for the page's header, node
// heartbeats are summed up (lock.Summary), and the matching locks are kept in list order,
// all of them for the JSON list, or only the rows the page shows. At 100k Leases,
// summarizing and sorting every lock took most of a second; the page formats 500.
type scan struct {
	at                         time.Time
	total, unhealthy, matching int
	namespaces                 map[string]bool
	nodes                      nodeSummary
	// kept are the matching locks: namespace, name, kind order for the JSON list; for the
	// page, the unhealthy first, then the first healthy ones, at most maxRows.
	kept []*lock.Lease
}

// scanView judges every lock of src at at against f. listNodes keeps node heartbeats among
// the matches (the JSON list does; the page only when the class filter asks for them); rows
// bounds the kept locks to the page's (0: keep every match).
func scanView(src Source, at time.Time, f Filter, listNodes bool, rows int) *scan {
	s := &scan{at: at, namespaces: map[string]bool{}}
	atMicros := at.UnixMicro()
	var unhealthy []*lock.Lease
	healthy := &firstLocks{}
	src.Range(func(l *lock.Lease) {
		s.total++
		s.namespaces[l.Namespace()] = true
		ok := lock.Judge(l, atMicros).Healthy()
		if !ok {
			s.unhealthy++
		}
		if !f.matchLock(l.Namespace(), l.Class.String(), l.Kind().String()) {
			return
		}
		if l.Class == lock.ClassNodeHeartbeat {
			s.nodes.add(l, atMicros)
			if !listNodes {
				return
			}
		}
		if f.UnhealthyOnly && ok {
			return
		}
		s.matching++
		switch {
		case rows == 0:
			s.kept = append(s.kept, l)
		case !ok:
			unhealthy = append(unhealthy, l)
		default:
			healthy.keep(l, rows)
		}
	})
	if rows == 0 {
		slices.SortFunc(s.kept, compareLocks)
	} else {
		slices.SortFunc(unhealthy, compareLocks)
		first := slices.SortedFunc(slices.Values(*healthy), compareLocks)
		s.kept = append(unhealthy, first...)[:min(s.matching, rows)]
	}
	if s.nodes.Total() > 0 {
		s.nodes.finish()
	}
	return s
}

// compareLocks is the list's order: namespace, name, kind.
func compareLocks(a, b *lock.Lease) int {
	return cmp.Or(cmp.Compare(a.Namespace(), b.Namespace()), cmp.Compare(a.Name(), b.Name()), cmp.Compare(a.Kind().String(), b.Kind().String()))
}

// firstLocks is a max-heap in list order: its top is the last of the first locks kept, so
// the first n of many are found without sorting them all.
type firstLocks []*lock.Lease

// keep adds l if it is among the first n seen so far.
func (h *firstLocks) keep(l *lock.Lease, n int) {
	switch {
	case h.Len() < n:
		heap.Push(h, l)
	case compareLocks(l, (*h)[0]) < 0:
		(*h)[0] = l
		heap.Fix(h, 0)
	}
}

func (h firstLocks) Len() int           { return len(h) }
func (h firstLocks) Less(i, j int) bool { return compareLocks(h[i], h[j]) > 0 }
func (h firstLocks) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *firstLocks) Push(x any)        { *h = append(*h, x.(*lock.Lease)) }
func (h *firstLocks) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
