package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"
)

type config struct {
	bin, kubeconfig string
	scrapes         int // per kind; p99 of 10 is the slowest
	protoScrapes    int
	concurrent      int // sequential scrapes and concurrent pairs for the CPU comparison
	churnRate       float64
	churnFor        time.Duration
	workers         int
	profileDir      string // "": no profiles
	logger          *slog.Logger
}

// measure is one repeat at n Leases, each exporter a fresh process: a baseline against an
// empty namespace, the main exporter (ready, scrapes, memory, idle, churn), the lag probe
// during churn, and an exporter with --metrics.extended.
func measure(ctx context.Context, cl *cluster, n int, cfg config) (Run, error) {
	r := Run{Leases: n, LoadStart: load1()}
	log := cfg.logger.With("leases", n)

	base, _, err := startExporter(ctx, cfg.bin, cfg.kubeconfig, "--namespaces=bench-empty")
	if err != nil {
		return r, fmt.Errorf("baseline exporter: %w", err)
	}
	defer base.killIfRunning()
	for range 3 { // the same scrape history as the main exporter's, so pools and buffers match
		if _, _, _, err := base.scrape(textIdentity, false); err != nil {
			return r, err
		}
	}
	r.BaseHeapB, err = base.liveHeap()
	r.BaseRSSB, _ = base.memory()
	_ = base.Stop()
	if err != nil {
		return r, err
	}

	log.Info("starting main exporter")
	p, readyz, err := startExporter(ctx, cfg.bin, cfg.kubeconfig)
	if err != nil {
		return r, err
	}
	defer p.killIfRunning()
	_, r.PeakRSSReadyB = p.memory()
	d, size, body, err := p.scrape(textIdentity, true)
	if err != nil {
		return r, err
	}
	r.ReadyzS, r.ReadyS, r.IdentityB = readyz.Seconds(), (readyz + d).Seconds(), float64(size)
	s, _ := countSeries(body, "")
	body = nil // let the GC have the 114 MB before memory is measured
	r.Series, r.LeaseSeries = s.all, s.perLease
	if s.leases < float64(n) {
		return r, fmt.Errorf("first scrape counts %v Leases (lease_exporter_leases), want at least %d", s.leases, n)
	}

	log.Info("scraping", "each", cfg.scrapes)
	var times [2][]float64
	for k, kind := range []scrapeKind{textIdentity, textGzip} {
		for range cfg.scrapes {
			d, size, _, err := p.scrape(kind, false)
			if err != nil {
				return r, err
			}
			times[k] = append(times[k], d.Seconds())
			if kind == textGzip {
				r.GzipB = float64(size)
			}
		}
	}
	r.IdP50, r.IdP99 = percentile(times[0], 50), percentile(times[0], 99)
	r.GzP50, r.GzP99 = percentile(times[1], 50), percentile(times[1], 99)
	if err := concurrentScrapes(p, cfg.concurrent, &r); err != nil {
		return r, err
	}
	if r.HeapB, err = p.liveHeap(); err != nil {
		return r, err
	}
	r.RSSB, r.PeakRSSB = p.memory()
	profile := func(what, name string) {
		if cfg.profileDir != "" {
			path := filepath.Join(cfg.profileDir, fmt.Sprintf("%s-%d-%s.pb.gz", name, n, time.Now().Format("150405")))
			if err := p.saveProfile(what, path); err != nil {
				log.Warn("profile", "err", err)
			}
		}
	}
	profile("heap?gc=1", "heap")

	var proto []float64
	for range cfg.protoScrapes {
		d, size, _, err := p.scrape(protobuf, false)
		if err != nil {
			return r, err
		}
		proto, r.ProtoB = append(proto, d.Seconds()), float64(size)
	}
	r.ProtoP50 = percentile(proto, 50)
	_, r.PeakRSSProtoB = p.memory()

	// Idle and churn windows have the same length: churn plus one second for the exporter
	// to drain what arrived last. Nothing scrapes the main exporter in either window.
	window := cfg.churnFor + time.Second
	time.Sleep(2 * time.Second) // let the scrapes' background GC and sweeping finish
	log.Info("idle window", "for", window)
	c0 := p.cpuSeconds()
	time.Sleep(window)
	r.IdleCPUPerS = (p.cpuSeconds() - c0) / window.Seconds()

	// The lag is read from lease_renew_timestamp_seconds (the holder's renewTime, which the
	// bench wrote), exported only with --metrics.extended, and for the probe's node Leases
	// only with per-lease series too.
	probe, _, err := startExporter(ctx, cfg.bin, cfg.kubeconfig, "--lease-selector="+probeLabel+"=true",
		"--metrics.extended", "--metrics.node-heartbeats=per-lease")
	if err != nil {
		return r, fmt.Errorf("probe exporter: %w", err)
	}
	defer probe.killIfRunning()
	lp := newLagProbe()
	stop, unseen := make(chan struct{}), make(chan int)
	go func() { unseen <- lp.run(probe, 20*time.Millisecond, stop, 10*time.Second) }()
	log.Info("churn", "rate", cfg.churnRate, "for", cfg.churnFor)
	profiled := make(chan struct{})
	go func() {
		defer close(profiled)
		profile(fmt.Sprintf("profile?seconds=%d", int(cfg.churnFor.Seconds())), "cpu-churn")
	}()
	start, c0 := time.Now(), p.cpuSeconds()
	cs := churn(ctx, cl, n, cfg.churnRate, cfg.churnFor, cfg.workers, lp, cfg.logger)
	time.Sleep(time.Until(start.Add(window)))
	cpu, elapsed := p.cpuSeconds()-c0, time.Since(start).Seconds()
	<-profiled
	close(stop)
	r.LagUnseen = <-unseen
	_ = probe.Stop()
	r.ChurnRate, r.Applied, r.Failed = cs.rate, cs.applied, cs.failed
	r.CPUPerUpdateUS = (cpu - r.IdleCPUPerS*elapsed) / float64(max(cs.applied, 1)) * 1e6
	r.LagSamples = len(lp.lags)
	r.LagP50, r.LagP99, r.LagMax = percentile(lp.lags, 50), percentile(lp.lags, 99), percentile(lp.lags, 100)
	log.Info("churn done", "applied", cs.applied, "failed", cs.failed, "per_s", int(cs.rate), "mean_update_latency", cs.meanLatency, "lag samples", len(lp.lags), "probe scrapes", lp.scrapes)

	// Did the main exporter receive every renewal? Its modified-event counter (watch events
	// before the cache) against the renewals applied; the API server's own identity Lease
	// adds a few.
	if _, _, body, err = p.scrape(textIdentity, true); err != nil {
		return r, err
	}
	_, modified := countSeries(body, `lease_exporter_watch_events_total{type="modified"} `)
	body = nil // as above, before the live heap after churn
	r.EventsMinusUpdates = modified - float64(cs.applied)
	if r.HeapAfterChurnB, err = p.liveHeap(); err != nil {
		return r, err
	}
	_ = p.Stop()

	if err := extendedScrapes(ctx, cfg, n, &r); err != nil {
		return r, err
	}
	r.LoadEnd = load1()
	return r, nil
}

// concurrentScrapes compares the exporter's CPU per scrape when gzip scrapes (what
// Prometheus sends) come one at a time and when two arrive together (two Prometheus
// replicas), which the exporter serves from one render.
func concurrentScrapes(p *proc, k int, r *Run) error {
	var walls1, walls2 []float64
	c0 := p.cpuSeconds()
	for range k {
		d, _, _, err := p.scrape(textGzip, false)
		if err != nil {
			return err
		}
		walls1 = append(walls1, d.Seconds())
	}
	c1 := p.cpuSeconds()
	for range k {
		start := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j := range 2 {
			wg.Go(func() { _, _, _, errs[j] = p.scrape(textGzip, false) })
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			return fmt.Errorf("concurrent scrape: %v %v", errs[0], errs[1])
		}
		walls2 = append(walls2, time.Since(start).Seconds())
	}
	c2 := p.cpuSeconds()
	r.CPUScrape1, r.CPUScrape2 = (c1-c0)/float64(k), (c2-c1)/float64(2*k)
	r.Wall1, r.Wall2 = median(walls1), median(walls2)
	return nil
}

// extendedScrapes measures an exporter with --metrics.extended and per-lease node heartbeats
// (every family for every lock): series, bytes and scrape time beside the lean default.
func extendedScrapes(ctx context.Context, cfg config, n int, r *Run) error {
	p, _, err := startExporter(ctx, cfg.bin, cfg.kubeconfig, "--metrics.extended", "--metrics.node-heartbeats=per-lease")
	if err != nil {
		return fmt.Errorf("extended exporter: %w", err)
	}
	defer p.killIfRunning()
	_, size, body, err := p.scrape(textIdentity, true)
	if err != nil {
		return err
	}
	s, _ := countSeries(body, "")
	r.ExtSeries, r.ExtLeaseSeries, r.ExtIdentityB = s.all, s.perLease, float64(size)
	var times [2][]float64
	for k, kind := range []scrapeKind{textIdentity, textGzip} {
		for range cfg.scrapes {
			d, size, _, err := p.scrape(kind, false)
			if err != nil {
				return err
			}
			times[k] = append(times[k], d.Seconds())
			if kind == textGzip {
				r.ExtGzipB = float64(size)
			}
		}
	}
	r.ExtIdP50, r.ExtGzP50 = percentile(times[0], 50), percentile(times[1], 50)
	return p.Stop()
}
