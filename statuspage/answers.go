package statuspage

import (
	"maps"
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// The answers to the four routes, judged at the view's JudgedAt: the JSON list and the list
// page from one scan of the view, a lock's detail from one lookup.

// list is the JSON list: every lock of src matching f, in namespace, name and kind order.
func list(src Source, now time.Time, f Filter) api.List {
	at := src.JudgedAt(now)
	out := listHead(src, at, now)
	if !out.Synced {
		return out
	}
	s := scanView(src, at, f, true, 0)
	for _, l := range s.kept {
		out.Leases = append(out.Leases, api.Summarize(l, at))
	}
	out.Deleted = deletedList(src, tombstones(src), f)
	if s.nodes.Total() > 0 {
		out.NodeHeartbeats = s.nodes.json()
	}
	return out
}

// listPageOf is the list page: the same scan, of which only the rows shown are summarized
// and formatted.
func listPageOf(src Source, now time.Time, f Filter) listPage {
	at := src.JudgedAt(now)
	p := listPage{List: listHead(src, at, now), Filter: f, EvaluatedAt: at.UTC().Format(time.RFC3339)}
	for _, c := range lock.Classes {
		p.Classes = append(p.Classes, c.String())
	}
	if !p.Synced {
		return p
	}
	s := scanView(src, at, f, f.Class != "", maxRows)
	p.Total, p.Unhealthy, p.Matching = s.total, s.unhealthy, s.matching
	for _, l := range s.kept {
		p.Rows = append(p.Rows, rowOf(l, at, rebuiltOf(src, l)))
	}
	p.Deleted = deletedList(src, tombstones(src), f)
	for _, d := range p.Deleted {
		s.namespaces[d.Namespace] = true
		p.DeletedRows = append(p.DeletedRows, deletedRowOf(d, at))
	}
	p.Namespaces = slices.Sorted(maps.Keys(s.namespaces))
	if s.nodes.Total() > 0 {
		p.Nodes = &s.nodes
	}
	return p
}

// listHead is what every list says before its locks: whether the cache has synced, and as
// of when and whether stale it is judged.
func listHead(src Source, at, now time.Time) api.List {
	return api.List{Synced: src.HasSynced(), EvaluatedAt: at.UTC(), Stale: informer.Staleness(at, now) > 0,
		Leases: []api.Lease{}, Deleted: []api.Deleted{}}
}

// find returns the detail of the lock namespace/name of kind (its name: "Lease") judged at
// at, with its previous incarnation if it was recreated; for a lock that went, its
// tombstone's; false if src has neither.
func find(src Source, at time.Time, namespace, name, kind string) (api.Detail, bool) {
	k, ok := lock.KindNamed(kind)
	if !ok || !src.HasSynced() {
		return api.Detail{}, false
	}
	tombs := tombstones(src)
	if l := src.Lookup(k, namespace, name); l != nil {
		d := detail(l, at, rebuiltOf(src, l))
		d.PreviousIncarnation = previousIncarnation(src, tombs, l)
		d.Strategy, d.PreferredHolder = l.Strategy(), l.PreferredHolder()
		if k == lock.KindLease {
			d.Candidates = api.Candidates(src, namespace, name, d.PreferredHolder, at)
		}
		return d, true
	}
	if t := newestTombstone(tombs, lock.Ref{Kind: k, Namespace: namespace, Name: name}); t != nil {
		return buried(src, tombs, t), true
	}
	return api.Detail{}, false
}
