package statuspage

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// The detail page's view model: what detail.html renders, formatted once here.

type detailPage struct {
	api.Detail
	EvaluatedAt string
	RenewAge    string
	Skew        string
	Tenures     []tenureRow
	Cadence     string
	// Gaps sums up the leaderless times between the tenures kept: median and worst.
	Gaps string
	// Sparkline draws the renewal intervals against the lease duration.
	Sparkline  template.HTML
	Leaderless string
	// Gone is the deletion of a lock that went; Previous the incarnation before this one of
	// a lock recreated, with its holders.
	Gone, Previous  *deletedRow
	PreviousTenures []tenureRow
	// Timeline draws History; nil for locks that keep none.
	Timeline *timeline
	// Grafana is the lock's lease-detail dashboard URL, "" without --web.grafana-url.
	Grafana string
}

type tenureRow struct {
	api.Tenure
	From, To, LastRenew, Held, Gap string
}

// detailView formats d, judged at at (the view's JudgedAt), its timeline over the window
// named window, span long.
func detailView(d api.Detail, at time.Time, span time.Duration, window string) detailPage {
	judged := at
	if d.Deleted != nil {
		judged = d.Deleted.DeletedAt // a tombstone's state is judged when its lock went
	}
	p := detailPage{Detail: d, EvaluatedAt: judged.UTC().Format(time.RFC3339), RenewAge: seconds(d.RenewAgeSeconds),
		Skew: seconds(d.HolderClockSkewSeconds)}
	if d.Deleted != nil {
		p.Gone = ptr(deletedRowOf(*d.Deleted, at))
	}
	if prev := d.PreviousIncarnation; prev != nil {
		p.Previous = ptr(deletedRowOf(*prev, at))
		if prev.History != nil {
			p.PreviousTenures = tenureRows(prev.History.Tenures)
		}
	}
	if d.History == nil {
		return p
	}
	p.Tenures = tenureRows(d.History.Tenures)
	p.Timeline = timelineOf(d.History, judged, span, window, lockURL(d.Namespace, d.Name, d.Kind))
	if n := len(d.History.RenewalIntervalsSeconds); n > 0 {
		iv := slices.Clone(d.History.RenewalIntervalsSeconds)
		slices.Sort(iv)
		p.Cadence = fmt.Sprintf("last %d: min %s, median %s, max %s", n, seconds(&iv[0]), seconds(&iv[n/2]), seconds(&iv[n-1]))
		p.Sparkline = sparkline(d.History.RenewalIntervalsSeconds, d.LeaseDurationSeconds)
	}
	if d.History.LeaderlessSince != nil {
		p.Leaderless = stamp(*d.History.LeaderlessSince)
	}
	p.Gaps = gapsOf(d.History.Tenures)
	return p
}

// gapsOf sums up how long the lock was without a leader before each tenure kept (the first
// kept has no known gap): median and worst, "" when no holder change is kept.
func gapsOf(tenures []api.Tenure) string {
	var gaps []float64
	for _, t := range tenures {
		if t.GapBeforeSeconds != nil {
			gaps = append(gaps, *t.GapBeforeSeconds)
		}
	}
	if len(gaps) == 0 {
		return ""
	}
	slices.Sort(gaps)
	changes := "change"
	if len(gaps) > 1 {
		changes = "changes"
	}
	return fmt.Sprintf("median %s, worst %s over the last %d holder %s", seconds(&gaps[len(gaps)/2]), seconds(&gaps[len(gaps)-1]), len(gaps), changes)
}

// tenureRows formats tenures, newest first.
func tenureRows(tenures []api.Tenure) []tenureRow {
	var rows []tenureRow
	for _, t := range slices.Backward(tenures) {
		r := tenureRow{Tenure: t, From: "unknown", LastRenew: stamp(t.LastRenew), Held: cmp.Or(seconds(t.HeldSeconds), "unknown"),
			Gap: seconds(t.GapBeforeSeconds)}
		if !t.From.IsZero() {
			r.From = stamp(t.From)
		}
		if t.To != nil {
			r.To = stamp(*t.To)
		}
		rows = append(rows, r)
	}
	return rows
}
