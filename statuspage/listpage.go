package statuspage

import (
	"cmp"
	"container/heap"
	"maps"
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// listPageOf builds the list page straight from the view: every lock is judged and counted,
// but only the rows shown (at most maxRows) are summarized and formatted. At 100k Leases,
// summarizing and sorting all of them as the JSON list does took most of a second.
func listPageOf(view informer.View, now time.Time, f Filter) listPage {
	at := informer.JudgedAt(view, now)
	shown := List{Synced: view.HasSynced(), EvaluatedAt: at.UTC(), Stale: informer.Staleness(at, now) > 0, Leases: []Lease{}, Deleted: []Deleted{}}
	p := listPage{Filter: f, EvaluatedAt: shown.EvaluatedAt.Format(time.RFC3339)}
	for _, c := range lock.Classes {
		p.Classes = append(p.Classes, c.String())
	}
	if !shown.Synced {
		p.List = shown
		return p
	}
	atµ := at.UnixMicro()
	tombs := tombstones(view)
	namespaces := map[string]bool{}
	// The rows shown: every unhealthy match, then the first healthy ones in list order,
	// kept in a bounded heap rather than sorting all of them.
	var unhealthy []*lock.Lease
	healthy := &firstLocks{}
	nodes := &nodeSummary{}
	view.Range(func(l *lock.Lease) {
		p.Total++
		namespaces[l.Namespace()] = true
		j := lock.Judge(l, atµ)
		ok := j.Healthy()
		if !ok {
			p.Unhealthy++
		}
		if !f.matchLock(l.Namespace(), l.Class.String(), l.Kind().String()) {
			return
		}
		if l.Class == lock.ClassNodeHeartbeat {
			nodes.add(l, atµ)
			if f.Class == "" {
				return // summed up, not listed, unless the class filter asks for them
			}
		}
		if f.UnhealthyOnly && ok {
			return
		}
		p.Matching++
		if !ok {
			unhealthy = append(unhealthy, l)
		} else if healthy.Len() < maxRows {
			heap.Push(healthy, l)
		} else if compareLocks(l, (*healthy)[0]) < 0 {
			(*healthy)[0] = l
			heap.Fix(healthy, 0)
		}
	})
	slices.SortFunc(unhealthy, compareLocks)
	first := slices.SortedFunc(slices.Values(*healthy), compareLocks)
	for _, l := range append(unhealthy, first...)[:min(p.Matching, maxRows)] {
		r := rowOf(summarize(l, at), shown.EvaluatedAt)
		if h := l.History(); h != nil {
			r.Strip = strip(history(h.Snapshot(), l, at, r.Held), at)
		}
		p.Rows = append(p.Rows, r)
	}
	shown.Deleted = deletedList(view, tombs, f)
	for _, d := range shown.Deleted {
		namespaces[d.Namespace] = true
		p.DeletedRows = append(p.DeletedRows, deletedRowOf(d, shown.EvaluatedAt))
	}
	p.Namespaces = slices.Sorted(maps.Keys(namespaces))
	if nodes.Total() > 0 {
		nodes.finish()
		p.Nodes = nodes
	}
	p.List = shown
	return p
}

// compareLocks is the list's order: namespace, name, kind.
func compareLocks(a, b *lock.Lease) int {
	return cmp.Or(cmp.Compare(a.Namespace(), b.Namespace()), cmp.Compare(a.Name(), b.Name()), cmp.Compare(a.Kind().String(), b.Kind().String()))
}

// firstLocks is a max-heap in list order: its top is the last of the first locks kept.
type firstLocks []*lock.Lease

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
