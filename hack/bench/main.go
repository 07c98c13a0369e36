// Command bench measures lease-exporter against a real local control plane (etcd and
// kube-apiserver): time to ready, live heap per Lease, RSS, full-scrape latency and size,
// CPU per Lease renewal at steady churn, event-to-metric lag, two concurrent scrapes against
// one, and the effect of --metrics.extended. It prints a markdown table of medians over
// -runs repeats; docs/benchmarks.md explains the method and the results.
//
//	KUBEBUILDER_ASSETS=$(hack/kube-binaries/build.sh | tail -1) go run ./hack/bench -leases 1000,10000,100000 -churn 1000 -runs 3
//	go run ./hack/bench -smoke   # CI: 1k Leases, short churn, no thresholds; exit 1 only on errors
//
// With -prometheus DURATION it measures instead what the exporter's metric sets cost the
// user's Prometheus: one exporter, kube-state-metrics, and one real Prometheus per candidate
// set, side by side, scraping every 15 s for DURATION under renewal churn (prom.go):
//
//	go run ./hack/bench -leases 10000,100000 -prometheus 10m
//	go run ./hack/bench -smoke -prometheus 20s   # 1k Leases, 5 s scrapes, no kube-state-metrics build
//
// With -configmaps N it measures ConfigMap annotation locks among N heavy ConfigMaps against
// as many Lease locks (configmaps.go):
//
//	go run ./hack/bench -configmaps 10000 -configmap-bytes 100000 -configmap-locks 100
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/ksm"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	// client-go's own logging (watch restarts and the like) would drown the progress lines.
	klog.SetSlogLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, logger); err != nil {
		logger.Error("bench failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, logger *slog.Logger) error {
	leasesFlag := flag.String("leases", "1000,10000,100000", "Comma-separated numbers of Leases, measured in increasing order (created cumulatively).")
	runs := flag.Int("runs", 3, "Repeats per size; the table shows medians. Each repeat starts fresh exporter processes.")
	churnRate := flag.Float64("churn", 1000, "Lease renewals per second during the churn window.")
	churnFor := flag.Duration("churn-duration", 30*time.Second, "Length of the churn window (and of the idle window it is compared with).")
	scrapes := flag.Int("scrapes", 10, "Full scrapes per kind (identity, gzip) for the latency percentiles.")
	protoScrapes := flag.Int("proto-scrapes", 3, "Full protobuf scrapes (the client_golang path); 0 skips them.")
	workers := flag.Int("workers", 256, "Concurrent API clients for Lease creation and churn.")
	dir := flag.String("dir", "", "Control plane directory (default: a fresh one under /dev/shm, so etcd's fsyncs do not dominate creation).")
	profileDir := flag.String("profile", "", "Save the main exporter's heap profile (after scrapes) and CPU profile (during churn) to this directory.")
	jsonOut := flag.String("json", "", "Also write every run's raw numbers to this file.")
	envFlag := flag.String("exporter-env", "", "Space-separated KEY=value pairs for the exporters' environment, e.g. GOMAXPROCS=1.")
	argsFlag := flag.String("exporter-args", "", "Space-separated extra flags for every exporter, e.g. --kube.watch-batch-interval=0.")
	binFlag := flag.String("exporter-bin", "", "Run this lease-exporter binary instead of building the working tree's, e.g. one built from another commit for an A/B run.")
	smoke := flag.Bool("smoke", false, "Quick CI check: 1k Leases, one run, 200 renewals/s for 5s, 5 scrapes; asserts no thresholds.")
	promFor := flag.Duration("prometheus", 0, "Instead of the exporter's own costs, measure what each metric set costs a real Prometheus: scrape for this long at every -leases size under -churn.")
	promSets := flag.String("prometheus-sets", "per-lease,one-series,summary,ksm", "Metric sets for -prometheus, one Prometheus each: per-lease (--metrics.node-heartbeats=per-lease), one-series (one series per node heartbeat), summary (the default), ksm (real kube-state-metrics); summary-relabel cuts the default by metric_relabel_configs instead of the bench's filtering proxy (promsets.go).")
	promEvery := flag.Duration("scrape-interval", 15*time.Second, "Scrape interval of the -prometheus instances.")
	promDir := flag.String("prometheus-dir", os.TempDir(), "Parent directory of the -prometheus instances' TSDBs (default on disk, not tmpfs, so the TSDB does not count against memory).")
	cmCount := flag.Int("configmaps", 0, "Instead, measure ConfigMap annotation locks (configmaps.go): this many ConfigMaps, -configmap-locks of them locks, against as many Lease locks.")
	cmBytes := flag.Int("configmap-bytes", 100000, "Data per ConfigMap for -configmaps.")
	cmLocks := flag.Int("configmap-locks", 100, "ConfigMaps carrying the leader annotation (and Lease locks) for -configmaps.")
	kubectlRuns := flag.Int("kubectl", 0, "Instead, measure kubectl lease against kubectl get leases -A, this many runs of each at every -leases size (kubectl.go).")
	flag.Parse()
	exporterEnv, exporterArgs = strings.Fields(*envFlag), strings.Fields(*argsFlag)
	if *smoke {
		*leasesFlag, *runs, *churnRate, *churnFor, *scrapes, *protoScrapes, *workers = "1000", 1, 200, 5*time.Second, 5, 1, 32
		if *promFor > 0 {
			*promEvery = 5 * time.Second
			if !flagSet("prometheus-sets") {
				*promSets = "per-lease,one-series,summary"
			}
		}
	}
	var sizes []int
	for _, s := range strings.Split(*leasesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || (len(sizes) > 0 && n <= sizes[len(sizes)-1]) {
			return fmt.Errorf("invalid -leases %q: want increasing positive integers", *leasesFlag)
		}
		sizes = append(sizes, n)
	}
	if err := ensureAssets(logger); err != nil {
		return err
	}
	var pc promConfig
	if *promFor > 0 {
		var err error
		if pc.sets, err = parseSets(*promSets); err != nil {
			return err
		}
		if slices.ContainsFunc(pc.sets, func(c candidate) bool { return c.ksm }) {
			if pc.ksmBin, err = ksm.Build(); err != nil {
				return err
			}
		}
		pc.dir, pc.window, pc.interval, pc.churnRate, pc.workers, pc.logger = *promDir, *promFor, *promEvery, *churnRate, *workers, logger
	}
	logger.Info("machine", "cpus", runtime.NumCPU(), "load1", load1(), "exporter_env", exporterEnv, "exporter_args", exporterArgs)

	tmp, err := os.MkdirTemp(shmOr(*dir), "lease-exporter-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := *binFlag
	if bin == "" {
		logger.Info("building lease-exporter with hack/build.sh")
		if bin, err = exporterproc.Build(ctx, tmp); err != nil {
			return err
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	logger.Info("exporter", "bin", bin)
	cpDir := *dir
	if cpDir == "" {
		cpDir = filepath.Join(tmp, "controlplane")
	}
	logger.Info("starting etcd and kube-apiserver", "dir", cpDir)
	cl, err := startCluster(ctx, cpDir)
	if err != nil {
		return err
	}
	defer cl.cp.Stop()

	if *kubectlRuns > 0 {
		return runKubectl(ctx, cl, sizes, *kubectlRuns, *workers, tmp, logger)
	}
	if *cmCount > 0 {
		return runConfigMaps(ctx, cl, cmConfig{n: *cmCount, bytes: *cmBytes, locks: min(*cmLocks, *cmCount), runs: *runs,
			workers: min(*workers, 32), churnFor: *churnFor, bin: bin, kubeconfig: cl.cp.KubeconfigPath(), profileDir: *profileDir, logger: logger})
	}
	if *promFor > 0 {
		pc.bin, pc.kubeconfig = bin, cl.cp.KubeconfigPath()
		return runProm(ctx, cl, sizes, pc, *jsonOut)
	}
	cfg := config{bin: bin, kubeconfig: cl.cp.KubeconfigPath(), scrapes: *scrapes, protoScrapes: *protoScrapes,
		concurrent: 5, churnRate: *churnRate, churnFor: *churnFor, workers: *workers, profileDir: *profileDir, logger: logger}
	if *smoke {
		cfg.concurrent = 2
	}
	var results []Size
	for _, n := range sizes {
		logger.Info("creating Leases", "total", n, "new", n-len(cl.slots))
		start := time.Now()
		perS, err := cl.grow(ctx, n, *workers)
		if err != nil {
			return err
		}
		logger.Info("created", "total", n, "in", time.Since(start).Round(time.Millisecond), "per_s", int(perS))
		size := Size{Leases: n, CreatePerS: perS}
		for i := range *runs {
			logger.Info("run", "leases", n, "repeat", i+1, "of", *runs, "load1", load1())
			r, err := measure(ctx, cl, n, cfg)
			if err != nil {
				return fmt.Errorf("%d Leases, run %d: %w", n, i+1, err)
			}
			size.Runs = append(size.Runs, r)
		}
		results = append(results, size)
	}
	writeTable(os.Stdout, results)
	if *jsonOut != "" {
		b, err := json.MarshalIndent(jsonResults(results), "", "  ")
		if err != nil {
			return fmt.Errorf("-json: %w", err)
		}
		return os.WriteFile(*jsonOut, b, 0o644)
	}
	return nil
}

// runProm grows the cluster to each size and measures the metric sets there, printing each
// size's table (and rewriting -json) as soon as it is measured: a 100k run is long.
func runProm(ctx context.Context, cl *cluster, sizes []int, pc promConfig, jsonOut string) error {
	var results []PromRun
	commit := gitCommit()
	for _, n := range sizes {
		pc.logger.Info("creating Leases", "total", n, "new", n-len(cl.slots))
		if _, err := cl.grow(ctx, n, pc.workers); err != nil {
			return err
		}
		r, err := measureProm(ctx, cl, n, pc)
		if err != nil {
			return fmt.Errorf("%d Leases: %w", n, err)
		}
		results = append(results, r)
		writePromTable(os.Stdout, []PromRun{r}, commit)
		if jsonOut == "" {
			continue
		}
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return fmt.Errorf("-json: %w", err)
		}
		if err := os.WriteFile(jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// gitCommit names the commit measured, "-dirty" when the work tree has changes.
func gitCommit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=7").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// jsonResults turns the results into plain maps with null for NaN (a measure that was
// skipped, e.g. -proto-scrapes 0), which encoding/json cannot write as a number.
func jsonResults(sizes []Size) []map[string]any {
	out := make([]map[string]any, 0, len(sizes))
	for _, s := range sizes {
		runs := make([]map[string]any, 0, len(s.Runs))
		for _, r := range s.Runs {
			m := map[string]any{}
			v := reflect.ValueOf(r)
			for i := range v.NumField() {
				f := v.Field(i).Interface()
				if x, ok := f.(float64); ok && math.IsNaN(x) {
					f = nil
				}
				m[v.Type().Field(i).Name] = f
			}
			runs = append(runs, m)
		}
		out = append(out, map[string]any{"Leases": s.Leases, "CreatePerS": s.CreatePerS, "Runs": runs})
	}
	return out
}

// ensureAssets builds (or finds the cached) control plane binaries when KUBEBUILDER_ASSETS
// is unset, as `make test` does.
func ensureAssets(logger *slog.Logger) error {
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		return nil
	}
	logger.Info("KUBEBUILDER_ASSETS unset: running hack/kube-binaries/build.sh")
	cmd := exec.Command("hack/kube-binaries/build.sh")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("hack/kube-binaries/build.sh (run from the repository root): %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return os.Setenv("KUBEBUILDER_ASSETS", lines[len(lines)-1])
}

// shmOr puts the scratch directory on tmpfs when there is one: even without fsync (the harness
// runs etcd with --unsafe-no-fsync), etcd's writes on a shared disk would make Lease creation
// and churn measure the disk, not the exporter.
func shmOr(dir string) string {
	if dir != "" {
		return ""
	}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return ""
}

func load1() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
