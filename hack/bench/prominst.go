package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
)

// promInst is one Prometheus 2.42 (Debian's, as internal/testenv/promstack runs it) that
// stores one candidate set, in its own TSDB directory on its own loopback port.
type promInst struct {
	set      candidate
	p        *promstack.Process
	dir      string
	peakHeap float64
	// sums of RSS and heap polled in the second half of the window, for their means: both
	// swing with every garbage collection, so one reading at the end is noisy.
	rssSum, heapSum float64
	polls           int
}

// startProm starts a Prometheus for set scraping target every interval (timeout = interval)
// with the admin API on, for the snapshot that measures bytes per sample.
func startProm(ctx context.Context, parent string, set candidate, target string, interval time.Duration) (*promInst, error) {
	dir, err := os.MkdirTemp(parent, "prom-"+set.name+"-")
	if err != nil {
		return nil, err
	}
	p, err := promstack.StartPrometheus(ctx, dir, promstack.PrometheusOptions{
		Targets: []string{target}, ScrapeInterval: interval, EvaluationPeriod: interval, ScrapeTimeout: interval,
		ExternalLabels:       map[string]string{"bench_set": set.name},
		MetricRelabelConfigs: set.relabelConfigs(),
		Args:                 []string{"--web.enable-admin-api", "--log.level=warn"},
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("prometheus for %s: %w", set.name, err)
	}
	return &promInst{set: set, p: p, dir: dir}, nil
}

// close stops Prometheus and removes its TSDB.
func (pi *promInst) close() {
	pi.p.Stop()
	os.RemoveAll(pi.dir)
}

// self reads Prometheus' own /metrics (never stored: no instance scrapes itself) and returns
// the sum over label sets of each metric named in want.
func (pi *promInst) self(want ...string) (map[string]float64, error) {
	resp, err := http.Get(pi.p.URL + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		for _, w := range want {
			if name == w {
				v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
				if err == nil {
					out[w] += v
				}
			}
		}
	}
	return out, sc.Err()
}

// query runs an instant query and returns the first sample's value; no sample is an error.
func (pi *promInst) query(expr string) (float64, error) {
	raw, err := promstack.Query(pi.p.URL, expr)
	if err != nil {
		return math.NaN(), err
	}
	var res []struct {
		Value [2]any `json:"value"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return math.NaN(), fmt.Errorf("query %q: %w", expr, err)
	}
	if len(res) == 0 {
		return math.NaN(), fmt.Errorf("query %q: no result", expr)
	}
	s, _ := res[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

// waitScraped returns once the instance has stored its first scrape.
func (pi *promInst) waitScraped(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if v, err := pi.query("scrape_samples_post_metric_relabeling"); err == nil && v > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("prometheus for %s stored no scrape within %s\n%s", pi.set.name, timeout, pi.p.Logs())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// blockStats is what a TSDB snapshot of the head says about storage per sample.
type blockStats struct {
	Samples, Series, Chunks float64
	ChunkBytes, IndexBytes  float64
}

// snapshot persists the head as a block (POST /api/v1/admin/tsdb/snapshot: the head
// compaction a 2-hour block would be, done now) and reads the block's meta.json and sizes.
func (pi *promInst) snapshot() (blockStats, error) {
	var b blockStats
	resp, err := http.Post(pi.p.URL+"/api/v1/admin/tsdb/snapshot", "", nil)
	if err != nil {
		return b, err
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Name string `json:"name"`
		} `json:"data"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Data.Name == "" {
		return b, fmt.Errorf("snapshot: %v %s", err, r.Error)
	}
	metas, _ := filepath.Glob(filepath.Join(pi.dir, "prom-data", "snapshots", r.Data.Name, "*", "meta.json"))
	for _, m := range metas {
		var meta struct {
			Stats struct{ NumSamples, NumSeries, NumChunks float64 }
		}
		raw, err := os.ReadFile(m)
		if err != nil {
			return b, err
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return b, fmt.Errorf("%s: %w", m, err)
		}
		b.Samples += meta.Stats.NumSamples
		b.Series += meta.Stats.NumSeries
		b.Chunks += meta.Stats.NumChunks
		block := filepath.Dir(m)
		b.ChunkBytes += dirSize(filepath.Join(block, "chunks"))
		b.IndexBytes += dirSize(filepath.Join(block, "index"))
	}
	if len(metas) == 0 {
		return b, fmt.Errorf("snapshot %s has no block", r.Data.Name)
	}
	return b, nil
}

func dirSize(path string) float64 {
	var n int64
	_ = filepath.Walk(path, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return float64(n)
}
