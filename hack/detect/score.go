package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// key names one alert (its labels), so a notification Alertmanager sends again for the same
// alert counts once.
func key(n Notification) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(n.Labels)) {
		fmt.Fprintf(&b, "%s=%q,", k, n.Labels[k])
	}
	return b.String()
}

// pages are the firing notifications that page someone: each alert's first, and its first
// again after a resolution.
func pages(all []Notification) []Notification {
	firing := map[string]bool{}
	var out []Notification
	for _, n := range all {
		k := key(n)
		switch {
		case n.Status == "resolved":
			firing[k] = false
		case !firing[k]:
			firing[k] = true
			out = append(out, n)
		}
	}
	return out
}

// span is when a trial could be blamed for a page: from its start (a page before its fault
// is a false one too) to its end.
type span struct {
	from, to time.Time
}

// score fills every fault's outcomes from the notifications received, and returns the
// pages no fault explains. A page belongs to the fault whose namespace it names and during
// whose span it came; during an exclusive fault every page is that fault's, since it
// disturbs every lock. A must-page row's page counts as caught only up to grace after its
// repair (an alert whose `for` ran out just as the repair came, seen one scrape and one
// evaluation late); a page after that was not caused by the fault, and is a false one.
func score(faults []*Fault, spans []span, all []Notification, grace time.Duration) []Notification {
	var unattributed []Notification
	for _, f := range faults {
		f.Results = map[string]Outcome{}
		for _, s := range ruleSets {
			f.Results[s.ID] = Outcome{Alerts: []string{}, False: []Notification{}, Other: []Notification{}}
		}
	}
	owner := func(p Notification) (*Fault, *span) {
		for i, f := range faults {
			s := &spans[i]
			if f.Ran && f.Exclusive && !p.At.Before(s.from) && !p.At.After(s.to) {
				return f, s
			}
		}
		for i, f := range faults {
			s := &spans[i]
			if f.Ran && p.Labels["namespace"] == f.Namespace && !p.At.Before(s.from) && !p.At.After(s.to) {
				return f, s
			}
		}
		return nil, nil
	}
	for _, p := range pages(all) {
		f, _ := owner(p)
		if f == nil {
			unattributed = append(unattributed, p)
			continue
		}
		o := f.Results[p.Set]
		switch {
		case !f.MustPage:
			if otherOnQuietRow(f, p) {
				o.Other = append(o.Other, p)
			} else {
				o.False = append(o.False, p)
			}
		case p.At.Before(f.FaultAt), f.RepairAt != nil && p.At.After(f.RepairAt.Add(grace)):
			o.False = append(o.False, p)
		default:
			if !o.Paged {
				d := p.At.Sub(f.FaultAt).Seconds()
				o.PageSeconds = &d
			}
			o.Paged = true
			if !slices.Contains(o.Alerts, p.Alertname) {
				o.Alerts = append(o.Alerts, p.Alertname)
				slices.Sort(o.Alerts)
			}
		}
		f.Results[p.Set] = o
	}
	for i, f := range faults {
		for id, o := range f.Results {
			if o.Paged && f.RepairAt != nil {
				o.ResolveSeconds = resolved(all, f, spans[i], id)
				f.Results[id] = o
			}
		}
	}
	return unattributed
}

// otherOnQuietRow tells, for a page on a must-not-page row, an alert about something besides
// the election (shown apart) from a false page: a leadership alert, or any alert before the
// fault. After the fault's repair (an API server back) an alert of otherAlerts still says
// something true, e.g. that the exporter's watch was down for its `for`, so the time after
// the repair does not matter here.
func otherOnQuietRow(f *Fault, p Notification) bool {
	return !p.At.Before(f.FaultAt) && otherAlerts[p.Alertname]
}

// rescore sorts the recorded pages of every must-not-page row into false and other again,
// with otherOnQuietRow as it is now: for a scoring fix that came after a run, without running
// it again. The pages themselves are the run's; rows that must page keep their outcomes.
func rescore(r *Results, commit string) {
	for i := range r.Faults {
		f := &r.Faults[i]
		if f.MustPage {
			continue
		}
		for id, o := range f.Results {
			pages := append(append([]Notification{}, o.False...), o.Other...)
			slices.SortStableFunc(pages, func(a, b Notification) int { return a.At.Compare(b.At) })
			o.False, o.Other = []Notification{}, []Notification{}
			for _, p := range pages {
				if otherOnQuietRow(f, p) {
					o.Other = append(o.Other, p)
				} else {
					o.False = append(o.False, p)
				}
			}
			f.Results[id] = o
		}
	}
	r.Rescored = commit
}

// resolved is from the repair to the last resolution of the alerts set paged with on f,
// nil when one of them was still firing at the end.
func resolved(all []Notification, f *Fault, s span, set string) *float64 {
	last := map[string]Notification{}
	for _, n := range all {
		if n.Set == set && n.Labels["namespace"] == f.Namespace && !n.At.Before(f.FaultAt) && !n.At.After(s.to) {
			last[key(n)] = n
		}
	}
	var latest time.Time
	for _, n := range last {
		if n.Status != "resolved" {
			return nil
		}
		if n.At.After(latest) {
			latest = n.At
		}
	}
	if latest.IsZero() || latest.Before(*f.RepairAt) {
		return nil
	}
	d := latest.Sub(*f.RepairAt).Seconds()
	return &d
}
