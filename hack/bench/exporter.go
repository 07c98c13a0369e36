package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// proc is a running exporter plus its pid, so CPU and memory are read from /proc
// instead of by scraping: at 100k Leases a scrape costs more CPU than a minute of idling,
// and would disturb exactly what is being measured.
type proc struct {
	*exporterproc.Exporter
}

// prometheusAccept is what Prometheus 3 sends by default; the exporter negotiates the text
// format from it, so these scrapes take the fast text path, as production scrapes do.
const prometheusAccept = "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"

// protobufAccept is what Prometheus sends first when native histograms are enabled: it takes
// the client_golang path.
const protobufAccept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.6,*/*;q=0.1"

// scrapeClient never decompresses (DisableCompression), so gzip scrapes move and time the
// compressed bytes, and has no timeout short enough to cut a 100k-Lease scrape.
var scrapeClient = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 8}}

// exporterEnv and exporterArgs come from -exporter-env and -exporter-args.
var exporterEnv, exporterArgs []string

// startExporter starts bin and returns once /readyz answers 200, with the time from just
// before the process was started. /readyz is polled every 10 ms.
func startExporter(ctx context.Context, bin, kubeconfig string, extra ...string) (*proc, time.Duration, error) {
	start := time.Now()
	args := append([]string{"--kubeconfig=" + kubeconfig, "--web.enable-pprof", "--log.level=warn"}, exporterArgs...)
	args = append(args, extra...)
	e, err := exporterproc.StartWithEnv(ctx, bin, exporterEnv, args...)
	if err != nil {
		return nil, 0, err
	}
	p := &proc{Exporter: e}
	for {
		resp, err := scrapeClient.Get(e.URL() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, time.Since(start), nil
			}
		}
		if time.Since(start) > 5*time.Minute || ctx.Err() != nil || exited(e) {
			p.killIfRunning()
			return nil, 0, fmt.Errorf("exporter not ready after %s\n%s", time.Since(start), e.Logs())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func exited(e *exporterproc.Exporter) bool {
	select {
	case <-e.Done():
		return true
	default:
		return false
	}
}

// killIfRunning kills the exporter on an early return; after Stop it does nothing, so a
// process group id that the kernel may already have reused is never signalled.
func (p *proc) killIfRunning() {
	if !exited(p.Exporter) {
		p.Kill()
	}
}

// cpuSeconds is the process's CPU time: the sum over its threads of
// /proc/PID/task/TID/schedstat, the scheduler's nanosecond account that utime+stime (and so
// process_cpu_seconds_total) reports in 10 ms ticks. Go threads do not exit, so no time is
// lost with them. Falls back to the ticks of /proc/PID/stat.
func (p *proc) cpuSeconds() float64 { return cpuOf(p.Pid()) }

// cpuOf is cpuSeconds for any process, e.g. a Prometheus the bench started.
func cpuOf(pid int) float64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns float64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
			v, _ := strconv.ParseFloat(f[0], 64)
			ns += v
		}
	}
	if ns > 0 {
		return ns / 1e9
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

// memory returns VmRSS and VmHWM (peak RSS) in bytes.
func (p *proc) memory() (rss, hwm float64) { return memoryOf(p.Pid()) }

// memoryOf is memory for any process.
func memoryOf(pid int) (rss, hwm float64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "VmRSS:" || f[0] == "VmHWM:") {
			kb, _ := strconv.ParseFloat(f[1], 64)
			if f[0] == "VmRSS:" {
				rss = kb * 1024
			} else {
				hwm = kb * 1024
			}
		}
	}
	return rss, hwm
}

// liveHeap is the live heap after a full GC: /debug/pprof/heap?gc=1 runs runtime.GC() and,
// with debug=1, reads runtime.MemStats before the profile allocates anything, so HeapAlloc
// is exactly the reachable heap. Two rounds, the lower kept: the first may still find
// objects that only a finalizer released.
func (p *proc) liveHeap() (float64, error) {
	best := 0.0
	for range 2 {
		resp, err := scrapeClient.Get(p.URL() + "/debug/pprof/heap?gc=1&debug=1")
		if err != nil {
			return 0, err
		}
		v := -1.0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if s, ok := strings.CutPrefix(sc.Text(), "# HeapAlloc = "); ok {
				v, _ = strconv.ParseFloat(s, 64)
			}
		}
		resp.Body.Close()
		if v < 0 {
			return 0, fmt.Errorf("no HeapAlloc in heap profile")
		}
		if best == 0 || v < best {
			best = v
		}
	}
	return best, nil
}

// saveProfile writes /debug/pprof/<what> (e.g. "heap?gc=1", "profile?seconds=30") to path,
// for -profile: the numbers say how much, the profiles say where.
func (p *proc) saveProfile(what, path string) error {
	resp, err := scrapeClient.Get(p.URL() + "/debug/pprof/" + what)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type scrapeKind int

const (
	textIdentity scrapeKind = iota
	textGzip
	protobuf
)

// scrape fetches /metrics and returns the time until the last byte arrived and the bytes
// received (compressed for gzip). keep returns the body, for the scrapes that are parsed.
func (p *proc) scrape(kind scrapeKind, keep bool) (time.Duration, int64, []byte, error) {
	req, _ := http.NewRequest(http.MethodGet, p.URL()+"/metrics", nil)
	req.Header.Set("Accept", prometheusAccept)
	switch kind {
	case textGzip:
		req.Header.Set("Accept-Encoding", "gzip")
	case protobuf:
		req.Header.Set("Accept", protobufAccept)
	}
	start := time.Now()
	resp, err := scrapeClient.Do(req)
	if err != nil {
		return 0, 0, nil, err
	}
	defer resp.Body.Close()
	var body []byte
	var n int64
	if keep {
		body, err = io.ReadAll(resp.Body)
		n = int64(len(body))
	} else {
		n, err = io.Copy(io.Discard, resp.Body)
	}
	d := time.Since(start)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("/metrics: %s", resp.Status)
	}
	return d, n, body, err
}

// series counts the sample lines of a text exposition.
type series struct {
	all      int     // every sample line
	perLease int     // lease_* without the exporter's own lease_exporter_*
	leases   float64 // the sum of lease_exporter_leases: every Lease the exporter has, by class
}

// countSeries counts a text exposition's samples and returns the value of the line starting
// with find (-1 if none).
func countSeries(body []byte, find string) (s series, found float64) {
	found = -1
	for line := range bytes.Lines(body) {
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		s.all++
		switch {
		case bytes.HasPrefix(line, []byte("lease_exporter_")):
			if v, ok := bytes.CutPrefix(line, []byte("lease_exporter_leases{")); ok {
				if _, num, ok := bytes.Cut(v, []byte("} ")); ok {
					x, _ := strconv.ParseFloat(strings.TrimSpace(string(num)), 64)
					s.leases += x
				}
			}
			if find != "" && bytes.HasPrefix(line, []byte(find)) {
				found, _ = strconv.ParseFloat(strings.TrimSpace(string(line[len(find):])), 64)
			}
		case bytes.HasPrefix(line, []byte("lease_")):
			s.perLease++
		}
	}
	return s, found
}
