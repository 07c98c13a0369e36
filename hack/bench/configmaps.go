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
// Two exporters are compared, each while its own locks renew every 2 s:
//
//	leases only:  --locks=leases, the Lease locks renewing
//	+configmaps:  --locks=leases,configmaps, the ConfigMap locks renewing (the Leases idle)
//
// Same number of locks and renewals; the second also lists and watches every ConfigMap,
// metadata-only. Bytes read are the exporter's read() bytes (/proc/PID/io rchar), nearly all
// from its API server connections: set against the ConfigMaps' total data they show whether
// the data crossed the wire.
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
	variants := []struct {
		name, flag string
		renew      func(ctx context.Context, i int) error
	}{
		{"leases only", "--locks=leases", func(ctx context.Context, i int) error { return renewLease(ctx, cl, i) }},
		{"+configmaps", "--locks=leases,configmaps", func(ctx context.Context, i int) error { return renewConfigMap(ctx, cl, i) }},
	}
	for r := range c.runs {
		for _, v := range variants {
			c.logger.Info("run", "variant", v.name, "repeat", r+1, "load1", load1())
			res, err := measureLocks(ctx, c, v.flag, v.renew)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			results[v.name] = append(results[v.name], res)
		}
	}
	writeCMTable(os.Stdout, c, results, []string{variants[0].name, variants[1].name})
	return nil
}

// measureLocks starts an exporter with flag, measures its sync, then renews every lock every
// 2 s through renew for churnFor and measures its CPU and reads.
func measureLocks(ctx context.Context, c cmConfig, flag string, renew func(context.Context, int) error) (cmRun, error) {
	var r cmRun
	p, ready, err := startExporter(ctx, c.bin, c.kubeconfig, flag)
	if err != nil {
		return r, err
	}
	defer p.killIfRunning()
	r.ready = ready
	r.syncRead = readBytes(p.pid)
	time.Sleep(2 * time.Second) // the watches' first batches
	if r.heap, err = p.liveHeap(); err != nil {
		return r, err
	}
	r.rss, _ = p.memory()
	if c.profileDir != "" {
		name := strings.NewReplacer("--locks=", "", ",", "-").Replace(flag)
		if err := p.saveProfile("heap?gc=1", filepath.Join(c.profileDir, "heap-"+name+".pb.gz")); err != nil {
			return r, err
		}
	}

	read0, cpu0, start := readBytes(p.pid), p.cpuSeconds(), time.Now()
	var renewals atomic.Int64
	churnCtx, cancel := context.WithTimeout(ctx, c.churnFor)
	defer cancel()
	var wg sync.WaitGroup
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
				if err := renew(churnCtx, i); err == nil {
					renewals.Add(1)
				}
				t.Reset(2 * time.Second)
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	r.cpuPerS = (p.cpuSeconds() - cpu0) / secs
	r.churnRead = readBytes(p.pid) - read0
	r.churnRate = float64(renewals.Load()) / secs
	return r, nil
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
	fmt.Fprintln(w, "| exporter | ready | bytes read to sync | live heap | RSS | renewals/s | CPU (cores) | bytes read per renewal |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, name := range order {
		rs := results[name]
		med := func(f func(cmRun) float64) float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		rate := med(func(r cmRun) float64 { return r.churnRate })
		fmt.Fprintf(w, "| %s | %.2f s | %.2f MB | %.2f MB | %.1f MB | %.0f | %.4f | %.0f B |\n", name,
			med(func(r cmRun) float64 { return r.ready.Seconds() }),
			med(func(r cmRun) float64 { return float64(r.syncRead) / 1e6 }),
			med(func(r cmRun) float64 { return r.heap / 1e6 }),
			med(func(r cmRun) float64 { return r.rss / 1e6 }), rate,
			med(func(r cmRun) float64 { return r.cpuPerS }),
			med(func(r cmRun) float64 { return float64(r.churnRead) / (r.churnRate * c.churnFor.Seconds()) }))
	}
}
