package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/ksm"
)

// promConfig is what the -prometheus mode needs besides the cluster.
type promConfig struct {
	bin, kubeconfig, ksmBin string
	dir                     string // parent of the per-size scratch directory (TSDBs, logs)
	window, interval        time.Duration
	sets                    []candidate
	churnRate               float64
	workers                 int
	logger                  *slog.Logger
}

// PromSet is what one Prometheus, storing one candidate set, cost. Fields are exported for -json.
type PromSet struct {
	Set                          string
	Kept                         exposition // what the set keeps of one scrape, counted by the bench
	HeadSeries, HeadChunks       float64    // prometheus_tsdb_head_series, _chunks at the end
	RSSMean, RSSEnd, RSSPeak     float64    // process_resident_memory_bytes: mean over the window's second half, at the end; VmHWM
	HeapMean, HeapEnd, HeapPeak  float64    // go_memstats_heap_inuse_bytes: the same, peak = highest polled
	CPUPerScrape                 float64    // CPU seconds over the window / scrapes in it
	Scrapes, Failed              float64    // count_over_time(up[window]); those with up 0
	ScrapeAvg, ScrapeMax         float64    // scrape_duration_seconds over the window
	SamplesScraped, SamplesKept  float64    // scrape_samples_scraped, _post_metric_relabeling
	AppendedInWindow             float64    // prometheus_tsdb_head_samples_appended_total
	Compactions                  float64    // prometheus_tsdb_compactions_total: head compactions in the run
	Block                        blockStats // the snapshot of the head
	SnapChunkBytes, SnapChunkSmp float64    // prometheus_tsdb_compaction_chunk_{size_bytes,samples}_sum of the snapshot
}

// PromRun is one -prometheus measurement at one size.
type PromRun struct {
	Leases                        int
	WindowS, IntervalS            float64
	Load1Min, Load1Mean, Load1Max float64 // sampled every 5 s over the window
	ChurnRate                     float64
	Applied, Failed               int
	ExporterCPU, KSMCPU           float64 // cores, averaged over the window
	ExporterRSS, ExporterPeakRSS  float64
	KSMRSS, KSMPeakRSS            float64
	EventsMinusUpdates            float64 // the exporter kept up with the churn: ≥ 0
	Sets                          []PromSet
}

var promSelf = []string{"prometheus_tsdb_head_series", "prometheus_tsdb_head_chunks", "go_memstats_heap_inuse_bytes",
	"process_resident_memory_bytes", "prometheus_tsdb_head_samples_appended_total", "prometheus_tsdb_compactions_total"}

// measureProm runs one exporter (and kube-state-metrics if a set needs it) and one
// Prometheus per candidate set at n Leases, all at once, for the window after every
// instance stored its first scrape, with renewal churn throughout.
func measureProm(ctx context.Context, cl *cluster, n int, pc promConfig) (PromRun, error) {
	r := PromRun{Leases: n, WindowS: pc.window.Seconds(), IntervalS: pc.interval.Seconds()}
	log := pc.logger.With("leases", n)
	work, err := os.MkdirTemp(pc.dir, "lease-exporter-prom-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(work)

	exp, _, err := startExporter(ctx, pc.bin, pc.kubeconfig, promExporterArgs...)
	if err != nil {
		return r, err
	}
	defer exp.killIfRunning()
	var kp *ksm.Process
	if pc.ksmBin != "" {
		log.Info("starting kube-state-metrics")
		if kp, err = ksm.Start(ctx, pc.ksmBin, pc.kubeconfig, work, n); err != nil {
			return r, err
		}
		defer kp.Stop()
	}
	var insts []*promInst
	defer func() {
		for _, pi := range insts {
			pi.close()
		}
	}()
	for _, set := range pc.sets {
		target := exp.Addr()
		switch {
		case set.ksm:
			target = strings.TrimPrefix(kp.URL, "http://")
		case set.source != nil && !set.relabel:
			f, err := startFilter(exp, set.keeper())
			if err != nil {
				return r, err
			}
			defer f.close()
			target = f.addr
		}
		pi, err := startProm(ctx, work, set, target, pc.interval)
		if err != nil {
			return r, err
		}
		insts = append(insts, pi)
	}
	for _, pi := range insts {
		if err := pi.waitScraped(ctx, 2*time.Minute+3*pc.interval); err != nil {
			return r, err
		}
	}
	log.Info("every Prometheus stored its first scrape; measuring", "window", pc.window, "churn", pc.churnRate)

	cpu0, app0 := make([]float64, len(insts)), make([]float64, len(insts))
	for i, pi := range insts {
		cpu0[i] = cpuOf(pi.p.Pid())
		s, _ := pi.self(promSelf...)
		app0[i] = s["prometheus_tsdb_head_samples_appended_total"]
	}
	start, expCPU0, ksmCPU0 := time.Now(), exp.cpuSeconds(), 0.0
	if kp != nil {
		ksmCPU0 = cpuOf(kp.Pid())
	}
	churned := make(chan churnStats, 1)
	go func() { churned <- churn(ctx, cl, n, pc.churnRate, pc.window, pc.workers, nil, pc.logger) }()
	loads := poll(ctx, insts, start.Add(pc.window/2), start.Add(pc.window), log)
	cs := <-churned
	elapsed := time.Since(start).Seconds()
	r.ChurnRate, r.Applied, r.Failed = cs.rate, cs.applied, cs.failed
	r.Load1Min, r.Load1Mean, r.Load1Max = stats(loads)
	r.ExporterCPU = (exp.cpuSeconds() - expCPU0) / elapsed
	r.ExporterRSS, r.ExporterPeakRSS = exp.memory()
	if kp != nil {
		r.KSMCPU = (cpuOf(kp.Pid()) - ksmCPU0) / elapsed
		r.KSMRSS, r.KSMPeakRSS = memoryOf(kp.Pid())
	}
	for i, pi := range insts {
		s, err := pi.final(cpuOf(pi.p.Pid())-cpu0[i], pc.window)
		if err != nil {
			return r, err
		}
		s.AppendedInWindow -= app0[i]
		r.Sets = append(r.Sets, s)
	}
	if err := r.account(exp, kp, pc.sets); err != nil {
		return r, err
	}
	for i, pi := range insts { // last: writing a block costs CPU and memory
		log.Info("snapshot", "set", pi.set.name)
		if err := r.Sets[i].snapshot(pi); err != nil {
			return r, err
		}
	}
	return r, nil
}

// poll samples every instance's heap (for its peak) and the load average every 5 s
// until the deadline, adds up RSS and heap from half on, and logs a line a minute.
func poll(ctx context.Context, insts []*promInst, half, deadline time.Time, log *slog.Logger) []float64 {
	var loads []float64
	for tick := 0; time.Now().Before(deadline) && ctx.Err() == nil; tick++ {
		loads = append(loads, load1())
		line := []any{"load1", load1()}
		for _, pi := range insts {
			s, err := pi.self(promSelf...)
			if err != nil {
				continue
			}
			pi.peakHeap = max(pi.peakHeap, s["go_memstats_heap_inuse_bytes"])
			if time.Now().After(half) {
				pi.rssSum, pi.heapSum, pi.polls = pi.rssSum+s["process_resident_memory_bytes"], pi.heapSum+s["go_memstats_heap_inuse_bytes"], pi.polls+1
			}
			line = append(line, pi.set.name, fmt.Sprintf("%.0fk series %.0f MB", s["prometheus_tsdb_head_series"]/1e3, s["process_resident_memory_bytes"]/mb))
		}
		if tick%12 == 0 {
			log.Info("prometheus", line...)
		}
		select {
		case <-ctx.Done():
		case <-time.After(min(5*time.Second, time.Until(deadline))):
		}
	}
	return loads
}

// final reads an instance's numbers at the end of the window; cpu is its CPU over it.
func (pi *promInst) final(cpu float64, window time.Duration) (PromSet, error) {
	s := PromSet{Set: pi.set.name}
	self, err := pi.self(promSelf...)
	if err != nil {
		return s, err
	}
	s.HeadSeries, s.HeadChunks = self["prometheus_tsdb_head_series"], self["prometheus_tsdb_head_chunks"]
	s.RSSEnd, s.HeapEnd = self["process_resident_memory_bytes"], self["go_memstats_heap_inuse_bytes"]
	s.HeapPeak = max(pi.peakHeap, s.HeapEnd)
	s.RSSMean, s.HeapMean = pi.rssSum/float64(max(1, pi.polls)), pi.heapSum/float64(max(1, pi.polls))
	_, s.RSSPeak = memoryOf(pi.p.Pid())
	s.AppendedInWindow, s.Compactions = self["prometheus_tsdb_head_samples_appended_total"], self["prometheus_tsdb_compactions_total"]
	w := fmt.Sprintf("[%ds]", int(window.Seconds()))
	for _, q := range []struct {
		dst  *float64
		expr string
	}{
		{&s.Scrapes, "count_over_time(up" + w + ")"},
		{&s.Failed, "count_over_time(up" + w + ") - sum_over_time(up" + w + ")"},
		{&s.ScrapeAvg, "avg_over_time(scrape_duration_seconds" + w + ")"},
		{&s.ScrapeMax, "max_over_time(scrape_duration_seconds" + w + ")"},
		{&s.SamplesScraped, "scrape_samples_scraped"},
		{&s.SamplesKept, "scrape_samples_post_metric_relabeling"},
	} {
		if *q.dst, err = pi.query(q.expr); err != nil {
			return s, err
		}
	}
	s.CPUPerScrape = cpu / s.Scrapes
	return s, nil
}

// account counts what each set keeps of one scrape of its source, and checks that the
// exporter received every renewal (its modified events against the renewals applied),
// scraping again for a few seconds while the last batch may still be on its way.
func (r *PromRun) account(exp *proc, kp *ksm.Process, sets []candidate) error {
	var body []byte
	for try := range 5 {
		var err error
		if _, _, body, err = exp.scrape(textIdentity, true); err != nil {
			return err
		}
		_, modified := countSeries(body, `lease_exporter_watch_events_total{type="modified"} `)
		if r.EventsMinusUpdates = modified - float64(r.Applied); r.EventsMinusUpdates >= 0 || try == 4 {
			break
		}
		time.Sleep(2 * time.Second)
	}
	var ksmBody []byte
	var err error
	if kp != nil {
		if ksmBody, err = kp.Scrape(); err != nil {
			return err
		}
	}
	for i, set := range sets {
		b := body
		if set.ksm {
			b = ksmBody
		}
		r.Sets[i].Kept = account(b, set.keeper())
	}
	return nil
}

func (s *PromSet) snapshot(pi *promInst) error {
	sums := []string{"prometheus_tsdb_compaction_chunk_size_bytes_sum", "prometheus_tsdb_compaction_chunk_samples_sum"}
	before, err := pi.self(sums...)
	if err != nil {
		return err
	}
	if s.Block, err = pi.snapshot(); err != nil {
		return fmt.Errorf("%s: %w", pi.set.name, err)
	}
	after, err := pi.self(sums...)
	s.SnapChunkBytes = after[sums[0]] - before[sums[0]]
	s.SnapChunkSmp = after[sums[1]] - before[sums[1]]
	return err
}

// stats returns min, mean and max.
func stats(vs []float64) (lo, mean, hi float64) {
	if len(vs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo, hi, mean = min(lo, v), max(hi, v), mean+v/float64(len(vs))
	}
	return lo, mean, hi
}
