package statuspage

import (
	"fmt"
	"html/template"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// The list page's view model: what list.html renders, formatted once here.

// row is one lock in the list page, formatted; the V fields are the sort keys.
// Its fields are its own, not an embedded Lease's: text/template finds a promoted field by a
// reflective search that allocates, which for 2,000 rows was most of the page's time.
type row struct {
	Namespace, Name, Kind, Class, Holder string
	Held, Healthy                        bool
	Problems                             []string
	URL                                  string
	RenewAge, Skew, Duration, Trans      string
	LastChange                           string
	RenewAgeV, SkewV, LastChangeV        float64
	// Strip is the lock's last hour as a small timeline; empty for locks that keep no
	// history.
	Strip template.HTML
}

// maxRows bounds the list page: at 100k Leases a full table would be tens of megabytes that
// no browser shows usefully. Unhealthy rows come first, so they are never the ones cut; the
// JSON API is not bounded. 500 keeps the page within its 50 ms budget at 100k Leases
// (BenchmarkPages): 2,000 rows with their strips took about 110 ms.
const maxRows = 500

type listPage struct {
	api.List
	Filter              Filter
	Namespaces, Classes []string
	Rows                []row
	Total, Unhealthy    int
	Matching            int // rows matching the filter, before maxRows
	EvaluatedAt         string
	// DeletedRows are the locks deleted recently, newest first (at most
	// informer.MaxTombstones: no bound of their own).
	DeletedRows []deletedRow
	// Nodes sums up the node heartbeats the filter selects; the table lists them only when
	// the class filter is node-heartbeat. Nil when there are none.
	Nodes *nodeSummary
	// Grafana is the leases overview dashboard's URL, "" without --web.grafana-url.
	Grafana string
}

// rowOf summarizes lk judged at at and formats it for the list page, with the strip of its
// last hour when it keeps a history (rebuilt: its tenures read back from Events).
func rowOf(lk *lock.Lease, at time.Time, rebuilt []lock.Tenure) row {
	l := api.Summarize(lk, at)
	r := row{Namespace: l.Namespace, Name: l.Name, Kind: l.Kind, Class: l.Class, Holder: l.Holder, Held: l.Held,
		Healthy: l.Healthy, Problems: l.Problems, URL: lockURL(l.Namespace, l.Name, l.Kind), RenewAge: seconds(l.RenewAgeSeconds),
		Skew: seconds(l.HolderClockSkewSeconds), RenewAgeV: orInf(l.RenewAgeSeconds), SkewV: orInf(l.HolderClockSkewSeconds)}
	if l.LeaseDurationSeconds != nil {
		r.Duration = fmt.Sprintf("%ds", *l.LeaseDurationSeconds)
	}
	if l.LeaseTransitions != nil {
		r.Trans = fmt.Sprint(*l.LeaseTransitions)
	}
	if l.LastHolderChange != nil {
		r.LastChange = ago(*l.LastHolderChange, at)
		r.LastChangeV = float64(l.LastHolderChange.UnixMilli()) / 1e3
	}
	if h := lk.History(); h != nil {
		r.Strip = strip(history(h.Snapshot().AfterRebuilt(rebuilt), lk, at, r.Held), at)
	}
	return r
}
