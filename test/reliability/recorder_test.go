package reliability_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// sample is one scrape taken while a fault was injected.
type sample struct {
	at  time.Time
	s   *exporterproc.Scrape
	err error
}

// recorder scrapes an exporter at a fixed interval in the background, so scraping goes on
// while StopAPIServer, StartAPIServer and RestartEtcd block the test goroutine: "every scrape
// during the outage succeeds" is checked over all of them afterwards.
type recorder struct {
	mu      sync.Mutex
	samples []sample
	stop    chan struct{}
	done    chan struct{}
}

func record(t *testing.T, exp *exporterproc.Exporter, interval time.Duration) *recorder {
	t.Helper()
	r := &recorder{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			s, err := exp.Scrape()
			r.mu.Lock()
			r.samples = append(r.samples, sample{at: time.Now(), s: s, err: err})
			r.mu.Unlock()
			select {
			case <-r.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { r.Stop() })
	return r
}

// Stop ends recording (idempotent) and returns every sample.
func (r *recorder) Stop() []sample {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sample(nil), r.samples...)
}

// Since returns the samples taken at or after t0 so far.
func (r *recorder) Since(t0 time.Time) []sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sample
	for _, s := range r.samples {
		if !s.at.Before(t0) {
			out = append(out, s)
		}
	}
	return out
}

// checkSamples applies the invariants that must hold in every scrape of a fault window:
// the scrape succeeds, every lease in held is held (a stale cache never turns into a false
// "no holder"), and every lease in present has exactly one lease_info series.
func checkSamples(t *testing.T, samples []sample, namespace string, held, present []string) {
	t.Helper()
	if len(samples) == 0 {
		t.Fatal("no scrapes recorded")
	}
	failures := 0
	for _, sm := range samples {
		var problem string
		if sm.err != nil {
			problem = "scrape failed: " + sm.err.Error()
		} else {
			for _, name := range held {
				if v := leaseValue(sm.s, "lease_held", namespace, name); v != 1 {
					problem += fmt.Sprintf("lease_held{lease=%q} = %v (%s); ", name, v, health(sm.s))
				}
			}
			counts := infoCounts(sm.s, namespace)
			for _, name := range present {
				if counts[name] != 1 {
					problem += fmt.Sprintf("%d lease_info series for %s; ", counts[name], name)
				}
			}
			for name, n := range counts {
				if n > 1 {
					problem += fmt.Sprintf("%d lease_info series for %s; ", n, name)
				}
			}
		}
		if problem != "" {
			failures++
			if failures <= 5 {
				t.Errorf("scrape at %s: %s", sm.at.Format("15:04:05.000"), problem)
			}
		}
	}
	if failures > 5 {
		t.Errorf("... %d of %d scrapes failed the invariants", failures, len(samples))
	}
}

// watchDown returns the samples in which lease_exporter_watch_up is 0.
func watchDown(samples []sample) []sample {
	var out []sample
	for _, sm := range samples {
		if sm.err == nil && gauge(sm.s, "lease_exporter_watch_up") == 0 {
			out = append(out, sm)
		}
	}
	return out
}

// checkStaleGrows checks that while the watch was down, watch_stale_seconds grew with the
// clock, and that lease_held was frozen (evaluated at the moment the view went stale).
func checkStaleGrows(t *testing.T, down []sample, namespace, lease string) {
	t.Helper()
	if len(down) < 2 {
		t.Fatalf("only %d scrapes saw the watch down; cannot judge staleness", len(down))
	}
	first, last := down[0], down[len(down)-1]
	grew := gauge(last.s, "lease_exporter_watch_stale_seconds") - gauge(first.s, "lease_exporter_watch_stale_seconds")
	elapsed := last.at.Sub(first.at).Seconds()
	if grew < elapsed-2 || grew > elapsed+2 {
		t.Errorf("watch_stale_seconds grew by %.1fs over %.1fs of broken watch", grew, elapsed)
	}
	// A renewing holder cannot renew while the API server is down: only the freeze (held
	// evaluated at the moment the view went stale) keeps it held for the whole outage.
	for _, sm := range down {
		if held := leaseValue(sm.s, "lease_held", namespace, lease); held != 1 {
			t.Errorf("lease_held %v %s into a broken watch: not frozen at the last known state", held, sm.at.Sub(first.at).Round(time.Second))
			break
		}
	}
}
