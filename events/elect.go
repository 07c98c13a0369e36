package events

import (
	"context"
	"os"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// The writer's election. HA replicas of one shard watch the same locks and see the same
// changes; each writing them would write every Event twice. So they elect one writer with a
// Lease of their own, by client-go's leader election, the same elector most of the locks the
// exporter watches use; the exporter then watches its own election too (docs/events.md).
// Every replica keeps tracking (tracker), so the one elected next knows each lock's holder
// and which expiries were already written, and writes nothing twice. What changes in the
// seconds between two writers (at most the election's lease duration, 15 s, after a writer
// dies; none after a graceful handover, which releases the Lease) is in every replica's
// history but in no Event.

// DefaultLockName is the election Lease's name unless --events.lock says otherwise; a
// sharded exporter's shards elect apart, in <name>-shard-<i>.
const DefaultLockName = "lease-exporter-events"

// LockName is the election Lease of shard of total.
func LockName(name string, shard, total int) string {
	if total > 1 {
		return name + "-shard-" + strconv.Itoa(shard)
	}
	return name
}

// LockNamespace is where the election Lease lives unless --events.lock says: the Pod's own
// namespace (POD_NAMESPACE, which the chart sets, or the service account's), else "default".
func LockNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && len(b) > 0 {
		return string(b)
	}
	return metav1.NamespaceDefault
}

// Identity names this replica in the election: its host name (the Pod's name) and a random
// suffix, so a restarted Pod of the same name is a new candidate, as client-go's users do.
func Identity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "lease-exporter"
	}
	return host + "_" + rand.String(8)
}

// elect stands in the election until ctx ends; while elected, send writes. Losing the
// Lease (a renew deadline missed) stops writing at once and stands again.
func (w *Writer) elect(ctx context.Context) {
	lk := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: w.opts.Namespace, Name: w.opts.Name},
		Client:     w.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: w.opts.Identity},
	}
	cfg := leaderelection.LeaderElectionConfig{
		Lock:            lk,
		LeaseDuration:   or(w.opts.LeaseDuration, 15*time.Second),
		RenewDeadline:   or(w.opts.RenewDeadline, 10*time.Second),
		RetryPeriod:     or(w.opts.RetryPeriod, 2*time.Second),
		ReleaseOnCancel: true,
		Name:            w.opts.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				w.writing.Store(true)
				w.writer.Set(1)
				w.logger.Info("elected to write Kubernetes Events", "election", w.opts.Namespace+"/"+w.opts.Name, "identity", w.opts.Identity)
			},
			OnStoppedLeading: func() {
				w.writing.Store(false)
				w.writer.Set(0)
				w.logger.Info("no longer writing Kubernetes Events", "election", w.opts.Namespace+"/"+w.opts.Name, "identity", w.opts.Identity)
			},
			OnNewLeader: func(identity string) {
				if identity != w.opts.Identity {
					w.logger.Info("another replica writes Kubernetes Events", "writer", identity)
				}
			},
		},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(cfg)
		if err != nil {
			w.logger.Error("cannot stand in the Events writer election; no Events will be written", "err", err)
			return
		}
		le.Run(ctx)
	}
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
