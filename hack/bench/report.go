package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Run is what one repeat at one size measured. Fields are exported for -json.
type Run struct {
	Leases                     int
	LoadStart, LoadEnd         float64 // 1-minute load average
	ReadyzS, ReadyS            float64 // start → /readyz 200; → first full scrape received
	HeapB, BaseHeapB           float64 // live heap after GC; of the empty baseline exporter
	HeapAfterChurnB            float64
	RSSB, PeakRSSB, BaseRSSB   float64 // after text scrapes; VmHWM; baseline
	PeakRSSReadyB              float64 // VmHWM when /readyz first answers: the initial list
	PeakRSSProtoB              float64 // VmHWM after the protobuf scrapes
	Series, LeaseSeries        int
	IdentityB, GzipB, ProtoB   float64
	IdP50, IdP99, GzP50, GzP99 float64
	ProtoP50                   float64
	CPUScrape1, CPUScrape2     float64 // CPU seconds per scrape: one at a time, two at once
	Wall1, Wall2               float64 // median wall time of one scrape alone, of a concurrent pair
	IdleCPUPerS                float64
	ChurnRate                  float64
	Applied, Failed            int
	CPUPerUpdateUS             float64
	LagP50, LagP99, LagMax     float64
	LagSamples, LagUnseen      int
	EventsMinusUpdates         float64 // main exporter's modified events − renewals applied
	ExtSeries, ExtLeaseSeries  int
	ExtIdentityB, ExtGzipB     float64
	ExtIdP50, ExtGzP50         float64
}

// Size is every repeat at one number of Leases, plus the one-off creation rate.
type Size struct {
	Leases     int
	CreatePerS float64
	Runs       []Run
}

type row struct {
	name, target, anchor string
	value                func(Size, Run) float64
	format               string
}

const mb = 1 << 20

var rows = []row{
	{"1-min load average at start → end of run", "", "", nil, ""},
	{"Leases created per second (bench client)", "", "", func(s Size, _ Run) float64 { return s.CreatePerS }, "%.0f"},
	{"Ready: start → /readyz 200 (s)", "", "", func(_ Size, r Run) float64 { return r.ReadyzS }, "%.2f"},
	{"Ready: start → first full scrape received (s)", "≤ 15", "", func(_ Size, r Run) float64 { return r.ReadyS }, "%.2f"},
	{"Live heap per Lease, after GC, minus baseline (B)", "≤ 300", "680", func(_ Size, r Run) float64 { return (r.HeapB - r.BaseHeapB) / float64(r.Leases) }, "%.0f"},
	{"Live heap per Lease after churn (B)", "≤ 300", "", func(_ Size, r Run) float64 { return (r.HeapAfterChurnB - r.BaseHeapB) / float64(r.Leases) }, "%.0f"},
	{"Live heap total / empty baseline (MB)", "", "68", nil, ""},
	{"RSS after scrapes (MB)", "", "132", func(_ Size, r Run) float64 { return r.RSSB / mb }, "%.0f"},
	{"Peak RSS at ready: initial list (MB)", "", "", func(_ Size, r Run) float64 { return r.PeakRSSReadyB / mb }, "%.0f"},
	{"Peak RSS after text scrapes (MB)", "", "", func(_ Size, r Run) float64 { return r.PeakRSSB / mb }, "%.0f"},
	{"Peak RSS after protobuf-first scrapes (MB)", "", "", func(_ Size, r Run) float64 { return r.PeakRSSProtoB / mb }, "%.0f"},
	{"Series in the exposition (all / per-lease)", "", "200k", nil, ""},
	{"Exposition size, identity (MB)", "", "20", func(_ Size, r Run) float64 { return r.IdentityB / mb }, "%.1f"},
	{"Exposition size, gzip (MB)", "", "", func(_ Size, r Run) float64 { return r.GzipB / mb }, "%.2f"},
	{"Full scrape, identity, p50 / p99 (s)", "≤ 0.5", "≈0.1", nil, ""},
	{"Full scrape, gzip, p50 / p99 (s)", "≤ 1", "", nil, ""},
	{"Full scrape, protobuf-first Accept (served as text), p50 (s)", "", "", func(_ Size, r Run) float64 { return r.ProtoP50 }, "%.2f"},
	{"CPU of one gzip scrape alone (s)", "", "", func(_ Size, r Run) float64 { return r.CPUScrape1 }, "%.3f"},
	{"CPU of two simultaneous gzip scrapes together (s)", "≈ one scrape", "", func(_ Size, r Run) float64 { return 2 * r.CPUScrape2 }, "%.3f"},
	{"Wall time: one scrape / two concurrent (s)", "", "", nil, ""},
	{"Churn achieved (renewals/s)", "1000", "900", func(_ Size, r Run) float64 { return r.ChurnRate }, "%.0f"},
	{"CPU per renewal, minus idle (µs)", "≤ 20", "73", func(_ Size, r Run) float64 { return r.CPUPerUpdateUS }, "%.1f"},
	{"Idle CPU (ms per s)", "", "", func(_ Size, r Run) float64 { return r.IdleCPUPerS * 1e3 }, "%.1f"},
	{"Event-to-metric lag p50 / p99 / max (s)", "p99 ≤ 1", "", nil, ""},
	{"Lag samples (unseen)", "", "", nil, ""},
	{"Main exporter: modified events − renewals applied", "≥ 0", "", func(_ Size, r Run) float64 { return r.EventsMinusUpdates }, "%.0f"},
	{"extended: series (all / per-lease)", "", "", nil, ""},
	{"extended: exposition identity / gzip (MB)", "", "", nil, ""},
	{"extended: full scrape identity / gzip p50 (s)", "", "", nil, ""},
}

// cell renders one row for one size: the median over runs of each number in it.
func cell(name string, s Size) string {
	med := func(f func(Run) float64) float64 {
		vs := make([]float64, len(s.Runs))
		for i, r := range s.Runs {
			vs[i] = f(r)
		}
		return median(vs)
	}
	switch {
	case strings.HasPrefix(name, "1-min load"):
		return fmt.Sprintf("%.1f → %.1f", med(func(r Run) float64 { return r.LoadStart }), med(func(r Run) float64 { return r.LoadEnd }))
	case strings.HasPrefix(name, "Live heap total"):
		return fmt.Sprintf("%.1f / %.1f", med(func(r Run) float64 { return r.HeapB / mb }), med(func(r Run) float64 { return r.BaseHeapB / mb }))
	case strings.HasPrefix(name, "Series"):
		return fmt.Sprintf("%.0f / %.0f", med(func(r Run) float64 { return float64(r.Series) }), med(func(r Run) float64 { return float64(r.LeaseSeries) }))
	case strings.HasPrefix(name, "Full scrape, identity"):
		return fmt.Sprintf("%.3f / %.3f", med(func(r Run) float64 { return r.IdP50 }), med(func(r Run) float64 { return r.IdP99 }))
	case strings.HasPrefix(name, "Full scrape, gzip"):
		return fmt.Sprintf("%.3f / %.3f", med(func(r Run) float64 { return r.GzP50 }), med(func(r Run) float64 { return r.GzP99 }))
	case strings.HasPrefix(name, "Wall time"):
		return fmt.Sprintf("%.3f / %.3f", med(func(r Run) float64 { return r.Wall1 }), med(func(r Run) float64 { return r.Wall2 }))
	case strings.HasPrefix(name, "Event-to-metric"):
		return fmt.Sprintf("%.3f / %.3f / %.3f", med(func(r Run) float64 { return r.LagP50 }), med(func(r Run) float64 { return r.LagP99 }), med(func(r Run) float64 { return r.LagMax }))
	case strings.HasPrefix(name, "Lag samples"):
		return fmt.Sprintf("%.0f (%.0f)", med(func(r Run) float64 { return float64(r.LagSamples) }), med(func(r Run) float64 { return float64(r.LagUnseen) }))
	case strings.HasPrefix(name, "extended: series"):
		return fmt.Sprintf("%.0f / %.0f", med(func(r Run) float64 { return float64(r.ExtSeries) }), med(func(r Run) float64 { return float64(r.ExtLeaseSeries) }))
	case strings.HasPrefix(name, "extended: exposition"):
		return fmt.Sprintf("%.1f / %.2f", med(func(r Run) float64 { return r.ExtIdentityB / mb }), med(func(r Run) float64 { return r.ExtGzipB / mb }))
	case strings.HasPrefix(name, "extended: full scrape"):
		return fmt.Sprintf("%.3f / %.3f", med(func(r Run) float64 { return r.ExtIdP50 }), med(func(r Run) float64 { return r.ExtGzP50 }))
	}
	for _, rw := range rows {
		if rw.name == name && rw.value != nil {
			return fmt.Sprintf(rw.format, med(func(r Run) float64 { return rw.value(s, r) }))
		}
	}
	return "?"
}

// writeTable prints one markdown table: a row per measure, a column per size, then the
// target and the kube-state-metrics anchor (both stated for 100k Leases).
func writeTable(w io.Writer, sizes []Size) {
	fmt.Fprint(w, "| measure (median of runs) |")
	for _, s := range sizes {
		fmt.Fprintf(w, " %d Leases |", s.Leases)
	}
	fmt.Fprint(w, " target @100k | kube-state-metrics @100k |\n|---|")
	for range sizes {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprint(w, "---|---|\n")
	for _, rw := range rows {
		fmt.Fprintf(w, "| %s |", rw.name)
		for _, s := range sizes {
			fmt.Fprintf(w, " %s |", cell(rw.name, s))
		}
		fmt.Fprintf(w, " %s | %s |\n", rw.target, rw.anchor)
	}
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// percentile is the nearest-rank percentile: with 10 samples p99 is the slowest.
func percentile(vs []float64, p float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[max(0, int(math.Ceil(p/100*float64(len(s))))-1)]
}
