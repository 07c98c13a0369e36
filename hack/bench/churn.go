package main

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// probeShare is the share of renewals aimed at the probe Leases, so the lag percentiles
// rest on thousands of samples even at 100k Leases, where a uniform pick would hit the
// ~110 probe Leases about once a second.
const probeShare = 0.05

type churnStats struct {
	applied, failed int
	rate            float64 // achieved renewals per second
	meanLatency     time.Duration
}

// churn renews random Leases among the first n at a steady rate for d: a token bucket
// (burst of 50 ms worth) feeds a pool of workers, so a slow API server lowers the
// achieved rate (reported) instead of queueing an ever-growing backlog.
func churn(ctx context.Context, c *cluster, n int, perSecond float64, d time.Duration, workers int, lp *lagProbe, logger *slog.Logger) churnStats {
	var probes []int
	for i := range min(n, 1000) {
		if isProbe(i) {
			probes = append(probes, i)
		}
	}
	lim := rate.NewLimiter(rate.Limit(perSecond), max(1, int(perSecond/20)))
	lim.AllowN(time.Now(), lim.Burst()) // start with an empty bucket: no initial burst
	start := time.Now()
	wctx, cancel := context.WithDeadline(ctx, start.Add(d))
	defer cancel()
	var applied, failed, latency atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			for lim.Wait(wctx) == nil {
				i := rng.IntN(n)
				if rng.Float64() < probeShare {
					i = probes[rng.IntN(len(probes))]
				}
				sent := time.Now()
				out, err := c.renew(ctx, i)
				at := time.Now()
				latency.Add(int64(at.Sub(sent)))
				if err != nil {
					if failed.Add(1) <= 3 {
						logger.Warn("renewal failed", "lease", i, "err", err)
					}
					continue
				}
				applied.Add(1)
				if lp != nil && isProbe(i) {
					lp.updated(out.Namespace+"/"+out.Name, float64(out.Spec.RenewTime.UnixMicro())/1e6, at)
				}
			}
		}()
	}
	wg.Wait()
	return churnStats{applied: int(applied.Load()), failed: int(failed.Load()),
		rate:        float64(applied.Load()) / time.Since(start).Seconds(),
		meanLatency: time.Duration(latency.Load() / max(1, applied.Load()+failed.Load()))}
}

// lagProbe measures event-to-metric lag on a second exporter that watches only the probe
// Leases (--lease-selector=bench-probe=true): a renewal's lag is the time from its Update
// call returning to the end of the first scrape whose lease_renew_timestamp_seconds shows
// the new renewTime. Scraping the full 100k exposition instead would take longer than the
// lag being measured. The probe exporter shares the API server (and its load) with the
// main exporter, but not the main exporter's own event backlog; see the caught-up check.
type lagProbe struct {
	mu      sync.Mutex
	pending map[string][]pendingRenewal
	lags    []float64
	scrapes int
}

type pendingRenewal struct {
	renew float64 // expected lease_renew_timestamp_seconds
	at    time.Time
}

func newLagProbe() *lagProbe { return &lagProbe{pending: map[string][]pendingRenewal{}} }

func (lp *lagProbe) updated(key string, renew float64, at time.Time) {
	lp.mu.Lock()
	lp.pending[key] = append(lp.pending[key], pendingRenewal{renew, at})
	lp.mu.Unlock()
}

// run scrapes p every interval until stop is closed and every renewal was seen, or grace
// after stop; it returns the renewals never seen.
func (lp *lagProbe) run(p *proc, interval time.Duration, stop <-chan struct{}, grace time.Duration) int {
	var deadline time.Time
	for {
		_, _, body, err := p.scrape(textIdentity, true)
		seen := time.Now()
		if err == nil {
			lp.observe(body, seen)
		}
		select {
		case <-stop:
			if deadline.IsZero() {
				deadline = seen.Add(grace)
			}
		default:
		}
		lp.mu.Lock()
		left := 0
		for _, rs := range lp.pending {
			left += len(rs)
		}
		lp.mu.Unlock()
		if !deadline.IsZero() && (left == 0 || seen.After(deadline)) {
			return left
		}
		time.Sleep(interval)
	}
}

// observe settles every pending renewal whose value the exposition already shows (or
// passed: a later renewal of the same Lease implies the earlier one was applied too).
func (lp *lagProbe) observe(body []byte, seen time.Time) {
	const prefix = "lease_renew_timestamp_seconds{"
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.scrapes++
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		_, rest, _ := strings.Cut(line, `lease="`)
		name, rest, _ := strings.Cut(rest, `",namespace="`)
		ns, val, _ := strings.Cut(rest, `"} `)
		v, err := strconv.ParseFloat(val, 64)
		key := ns + "/" + name
		rs := lp.pending[key]
		if err != nil || len(rs) == 0 {
			continue
		}
		kept := rs[:0]
		for _, r := range rs {
			if r.renew <= v {
				lp.lags = append(lp.lags, seen.Sub(r.at).Seconds())
			} else {
				kept = append(kept, r)
			}
		}
		lp.pending[key] = kept
	}
}
