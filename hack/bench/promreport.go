package main

import (
	"fmt"
	"io"
	"slices"
)

type promRow struct {
	name string
	cell func(r PromRun, s PromSet) string
}

// ratioToKSM is a set's value over the ksm set's, "" without a ksm set.
func ratioToKSM(r PromRun, s PromSet, f func(PromSet) float64) string {
	i := slices.IndexFunc(r.Sets, func(k PromSet) bool { return k.Set == "ksm" })
	if i < 0 {
		return ""
	}
	return fmt.Sprintf("%.2f×", f(s)/f(r.Sets[i]))
}

var promRows = []promRow{
	{"series per Lease (head series / Leases)", func(r PromRun, s PromSet) string { return fmt.Sprintf("%.2f", s.HeadSeries/float64(r.Leases)) }},
	{"head series (prometheus_tsdb_head_series)", func(_ PromRun, s PromSet) string { return fmt.Sprintf("%.0f", s.HeadSeries) }},
	{"head series vs kube-state-metrics", func(r PromRun, s PromSet) string {
		return ratioToKSM(r, s, func(k PromSet) float64 { return k.HeadSeries })
	}},
	{"label bytes per series, as exposed (B)", func(_ PromRun, s PromSet) string {
		return fmt.Sprintf("%.0f", float64(s.Kept.LabelBytes)/float64(max(1, s.Kept.Series)))
	}},
	{"RSS mean of 2nd half / end / peak (MB)", func(_ PromRun, s PromSet) string {
		return fmt.Sprintf("%.0f / %.0f / %.0f", s.RSSMean/mb, s.RSSEnd/mb, s.RSSPeak/mb)
	}},
	{"RSS (mean) vs kube-state-metrics", func(r PromRun, s PromSet) string {
		return ratioToKSM(r, s, func(k PromSet) float64 { return k.RSSMean })
	}},
	{"RSS (mean) per head series (B)", func(_ PromRun, s PromSet) string { return fmt.Sprintf("%.0f", s.RSSMean/s.HeadSeries) }},
	{"Go heap in use mean / end / peak (MB)", func(_ PromRun, s PromSet) string {
		return fmt.Sprintf("%.0f / %.0f / %.0f", s.HeapMean/mb, s.HeapEnd/mb, s.HeapPeak/mb)
	}},
	{"Go heap (mean) vs kube-state-metrics", func(r PromRun, s PromSet) string {
		return ratioToKSM(r, s, func(k PromSet) float64 { return k.HeapMean })
	}},
	{"CPU per scrape (s)", func(_ PromRun, s PromSet) string { return fmt.Sprintf("%.3f", s.CPUPerScrape) }},
	{"scrape duration avg / max (s)", func(_ PromRun, s PromSet) string { return fmt.Sprintf("%.3f / %.3f", s.ScrapeAvg, s.ScrapeMax) }},
	{"samples per scrape: scraped / kept", func(_ PromRun, s PromSet) string {
		return fmt.Sprintf("%.0f / %.0f", s.SamplesScraped, s.SamplesKept)
	}},
	{"scrapes in window (failed)", func(_ PromRun, s PromSet) string { return fmt.Sprintf("%.0f (%.0f)", s.Scrapes, s.Failed) }},
	{"TSDB bytes per sample (snapshot chunks / samples)", func(_ PromRun, s PromSet) string {
		return fmt.Sprintf("%.2f", s.Block.ChunkBytes/s.Block.Samples)
	}},
	{"same, from prometheus_tsdb_compaction_chunk_*_sum", func(_ PromRun, s PromSet) string {
		return fmt.Sprintf("%.2f", s.SnapChunkBytes/s.SnapChunkSmp)
	}},
	{"samples per series in the head", func(_ PromRun, s PromSet) string { return fmt.Sprintf("%.1f", s.Block.Samples/s.Block.Series) }},
	{"block index bytes per series", func(_ PromRun, s PromSet) string { return fmt.Sprintf("%.0f", s.Block.IndexBytes/s.Block.Series) }},
	{"head compactions during the run", func(_ PromRun, s PromSet) string { return fmt.Sprintf("%.0f", s.Compactions) }},
}

// writePromTable prints, per size, the conditions of the run and a table with a column per set.
func writePromTable(w io.Writer, runs []PromRun, commit string) {
	for _, r := range runs {
		fmt.Fprintf(w, "\n%d Leases, %.0f s window, scrape every %.0f s, commit %s. Load1 %.1f / %.1f / %.1f (min / mean / max). "+
			"Churn %.0f renewals/s (%d failed). Exporter %.2f cores, RSS %.0f MB (peak %.0f), modified events − renewals %.0f. ",
			r.Leases, r.WindowS, r.IntervalS, commit, r.Load1Min, r.Load1Mean, r.Load1Max, r.ChurnRate, r.Failed,
			r.ExporterCPU, r.ExporterRSS/mb, r.ExporterPeakRSS/mb, r.EventsMinusUpdates)
		if r.KSMPeakRSS > 0 {
			fmt.Fprintf(w, "kube-state-metrics %.2f cores, RSS %.0f MB (peak %.0f).", r.KSMCPU, r.KSMRSS/mb, r.KSMPeakRSS/mb)
		}
		fmt.Fprint(w, "\n\n| measure |")
		for _, s := range r.Sets {
			fmt.Fprintf(w, " %s |", s.Set)
		}
		fmt.Fprint(w, "\n|---|")
		for range r.Sets {
			fmt.Fprint(w, "---:|")
		}
		fmt.Fprintln(w)
		for _, row := range promRows {
			fmt.Fprintf(w, "| %s |", row.name)
			for _, s := range r.Sets {
				fmt.Fprintf(w, " %s |", row.cell(r, s))
			}
			fmt.Fprintln(w)
		}
	}
}
