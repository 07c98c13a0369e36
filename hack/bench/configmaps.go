package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The -configmaps mode (issue 15): does watching ConfigMap annotation locks cost the exporter
// what the ConfigMaps weigh? The cluster gets -configmaps ConfigMaps of -configmap-bytes of
// data each, -configmap-locks of them carrying the leader annotation, and as many Lease locks.
// Two exporters run side by side while both kinds of locks renew every 2 s:
//
//	leases only:  --locks=leases; sees the Lease locks renew
//	+configmaps:  --locks=leases,configmaps with the Lease locks' namespace excluded; sees
//	              the ConfigMap locks renew
//
// Same number of locks and renewals each, in the same window; the second also lists and
// watches every ConfigMap, metadata-only. Bytes read are the exporter's read() bytes
// (/proc/PID/io rchar), nearly all from its API server connections: set against the
// ConfigMaps' total data they show whether the data crossed the wire.
//
//	go run ./hack/bench -configmaps 10000 -configmap-bytes 100000 -configmap-locks 100 -runs 3

const (
	cmNamespace   = "bench-configmaps"
	lockNamespace = "bench-lease-locks"
)

type cmConfig struct {
	n, bytes, locks, runs, workers int
	churnFor                       time.Duration
	bin, kubeconfig, profileDir    string
	logger                         *slog.Logger
}

// cmRun is one exporter's numbers.
type cmRun struct {
	ready                         time.Duration
	syncRead, churnRead           int64 // bytes read by the process: start to synced, during churn
	heap, rss, cpuPerS, churnRate float64
}

func runConfigMaps(ctx context.Context, cl *cluster, c cmConfig) error {
	for _, ns := range []string{cmNamespace, lockNamespace} {
		_, err := cl.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	start := time.Now()
	data := strings.Repeat("x", c.bytes)
	if err := parallel(ctx, c.n, c.workers, func(i int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cmNamespace, Name: fmt.Sprintf("cm-%05d", i)},
			Data: map[string]string{"payload": data}}
		if i < c.locks {
			cm.Annotations = map[string]string{"control-plane.alpha.kubernetes.io/leader": record(i, time.Now())}
		}
		return retry(ctx, func() error {
			_, err := cl.client.CoreV1().ConfigMaps(cmNamespace).Create(ctx, cm, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
	}); err != nil {
		return err
	}
	if err := parallel(ctx, c.locks, c.workers, func(i int) error {
		now := metav1.NewMicroTime(time.Now())
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: lockNamespace, Name: fmt.Sprintf("cm-%05d", i)},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holderOf(i)), LeaseDurationSeconds: ptr.To[int32](15),
				AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0)}}
		return retry(ctx, func() error {
			_, err := cl.client.CoordinationV1().Leases(lockNamespace).Create(ctx, l, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
	}); err != nil {
		return err
	}
	c.logger.Info("created", "configmaps", c.n, "bytes_each", c.bytes, "locks", c.locks, "in", time.Since(start).Round(time.Second))

	results := map[string][]cmRun{}
	variants := []cmVariant{
		{name: "leases only", flags: []string{"--locks=leases"},
			renew: func(ctx context.Context, i int) error { return renewLease(ctx, cl, i) }},
		// The bench's Lease locks are excluded (server-side), so this exporter's renewals are
		// its ConfigMap locks' only, as many as the first one's.
		{name: "+configmaps", flags: []string{"--locks=leases,configmaps", "--namespaces-exclude=" + lockNamespace},
			renew: func(ctx context.Context, i int) error { return renewConfigMap(ctx, cl, i) }},
	}
	for r := range c.runs {
		c.logger.Info("run", "repeat", r+1, "load1", load1())
		order := variants
		if r%2 == 1 { // alternate which one starts first
			order = []cmVariant{variants[1], variants[0]}
		}
		res, err := measurePair(ctx, c, order)
		if err != nil {
			return err
		}
		for i, v := range order {
			results[v.name] = append(results[v.name], res[i])
			c.logger.Info("measured", "variant", v.name, "repeat", r+1, "cpu_cores", fmt.Sprintf("%.4f", res[i].cpuPerS),
				"heap_mb", fmt.Sprintf("%.2f", res[i].heap/1e6), "rss_mb", fmt.Sprintf("%.1f", res[i].rss/1e6))
		}
	}
	writeCMTable(os.Stdout, c, results, []string{variants[0].name, variants[1].name})
	return nil
}

// cmVariant is one exporter of the comparison: its flags and how its locks are renewed.
type cmVariant struct {
	name  string
	flags []string
	renew func(ctx context.Context, i int) error
}

// measurePair runs both exporters side by side: each is started and measured after its sync,
// then both kinds of locks renew every 2 s for churnFor at the same time, so the two exporters
// share one window of machine load. (Measured one after the other, the ConfigMap window also
// carried the API server's and etcd's cost of rewriting 100 KB objects, and the exporter's CPU
// with it.) Each exporter sees only its own renewals.
func measurePair(ctx context.Context, c cmConfig, vs []cmVariant) ([]cmRun, error) {
	rs := make([]cmRun, len(vs))
	ps := make([]*proc, len(vs))
	for i, v := range vs {
		p, ready, err := startExporter(ctx, c.bin, c.kubeconfig, v.flags...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		defer p.killIfRunning()
		ps[i], rs[i].ready, rs[i].syncRead = p, ready, readBytes(p.Pid())
	}
	time.Sleep(2 * time.Second) // the watches' first batches
	for i, v := range vs {
		var err error
		if rs[i].heap, err = ps[i].liveHeap(); err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		rs[i].rss, _ = ps[i].memory()
		if c.profileDir != "" {
			name := strings.NewReplacer("--locks=", "", ",", "-").Replace(v.flags[0])
			if err := ps[i].saveProfile("heap?gc=1", filepath.Join(c.profileDir, "heap-"+name+".pb.gz")); err != nil {
				return nil, err
			}
		}
	}

	read0, cpu0 := make([]int64, len(vs)), make([]float64, len(vs))
	for i, p := range ps {
		read0[i], cpu0[i] = readBytes(p.Pid()), p.cpuSeconds()
	}
	start := time.Now()
	renewals := make([]atomic.Int64, len(vs))
	churnCtx, cancel := context.WithTimeout(ctx, c.churnFor)
	defer cancel()
	var wg sync.WaitGroup
	for k, v := range vs {
		for i := range c.locks {
			wg.Go(func() {
				// Spread the locks over the 2 s period, as independent electors are.
				t := time.NewTimer(time.Duration(i) * 2 * time.Second / time.Duration(c.locks))
				defer t.Stop()
				for {
					select {
					case <-churnCtx.Done():
						return
					case <-t.C:
					}
					if err := v.renew(churnCtx, i); err == nil {
						renewals[k].Add(1)
					}
					t.Reset(2 * time.Second)
				}
			})
		}
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	for i, p := range ps {
		rs[i].cpuPerS = (p.cpuSeconds() - cpu0[i]) / secs
		rs[i].churnRead = readBytes(p.Pid()) - read0[i]
		rs[i].churnRate = float64(renewals[i].Load()) / secs
		// A window whose renewals failed (an etcd out of space refuses every write) would
		// measure an idle exporter; it must not slip into the medians.
		if want := float64(c.locks) / 2; rs[i].churnRate < 0.9*want {
			return nil, fmt.Errorf("%s: only %.1f renewals/s of %.0f; the API server refused or delayed them (see its log)", vs[i].name, rs[i].churnRate, want)
		}
	}
	return rs, nil
}

func holderOf(i int) string { return fmt.Sprintf("ctrl-%05d-7d9f8c6b5-x2x4z_%08x", i, i*2654435761) }

// record is a client-go LeaderElectionRecord renewed at now.
func record(i int, now time.Time) string {
	ts := now.UTC().Format(time.RFC3339Nano)
	return `{"holderIdentity":"` + holderOf(i) + `","leaseDurationSeconds":15,"acquireTime":"` + ts + `","renewTime":"` + ts + `","leaderTransitions":0}`
}

func renewLease(ctx context.Context, cl *cluster, i int) error {
	leases := cl.client.CoordinationV1().Leases(lockNamespace)
	l, err := leases.Get(ctx, fmt.Sprintf("cm-%05d", i), metav1.GetOptions{})
	if err != nil {
		return err
	}
	l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// renewConfigMap rewrites the annotation as client-go's ConfigMapLock did: get, update the
// whole object (data included, to the API server; the exporter sees metadata only).
func renewConfigMap(ctx context.Context, cl *cluster, i int) error {
	cms := cl.client.CoreV1().ConfigMaps(cmNamespace)
	cm, err := cms.Get(ctx, fmt.Sprintf("cm-%05d", i), metav1.GetOptions{})
	if err != nil {
		return err
	}
	cm.Annotations["control-plane.alpha.kubernetes.io/leader"] = record(i, time.Now())
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// readBytes is the process's rchar: bytes returned by read() calls, sockets included.
func readBytes(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

func retry(ctx context.Context, fn func() error) error {
	var err error
	for attempt := range 5 {
		if err = fn(); err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return err
}

func writeCMTable(w io.Writer, c cmConfig, results map[string][]cmRun, order []string) {
	fmt.Fprintf(w, "\n%d ConfigMaps × %d B data (%.0f MB), %d of them locks; %d Lease locks; median of %d runs, commit %s\n\n",
		c.n, c.bytes, float64(c.n)*float64(c.bytes)/1e6, c.locks, c.locks, c.runs, gitCommit())
	fmt.Fprintln(w, "| exporter | ready | bytes read to sync | live heap | RSS | renewals/s | CPU (cores), median (min–max) | bytes read per renewal |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, name := range order {
		rs := results[name]
		sorted := func(f func(cmRun) float64) []float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			slices.Sort(v)
			return v
		}
		med := func(f func(cmRun) float64) float64 { v := sorted(f); return v[len(v)/2] }
		cpu := sorted(func(r cmRun) float64 { return r.cpuPerS })
		rate := med(func(r cmRun) float64 { return r.churnRate })
		fmt.Fprintf(w, "| %s | %.2f s | %.2f MB | %.2f MB | %.1f MB | %.0f | %.4f (%.4f–%.4f) | %.0f B |\n", name,
			med(func(r cmRun) float64 { return r.ready.Seconds() }),
			med(func(r cmRun) float64 { return float64(r.syncRead) / 1e6 }),
			med(func(r cmRun) float64 { return r.heap / 1e6 }),
			med(func(r cmRun) float64 { return r.rss / 1e6 }), rate,
			cpu[len(cpu)/2], cpu[0], cpu[len(cpu)-1],
			med(func(r cmRun) float64 { return float64(r.churnRead) / (r.churnRate * c.churnFor.Seconds()) }))
	}
}
