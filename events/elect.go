package events

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// The writer's election. HA replicas of one shard watch the same locks and see the same
// changes; each writing them would write every Event twice. So they elect one writer with a
// Lease of their own, by client-go's leader election, the same elector most of the locks the
// exporter watches use; the exporter then watches its own election too (docs/events.md).
// Every replica keeps tracking (tracker), so the one elected next knows each lock's holder
// and which expiries were already written, and writes nothing twice. What changes in the
// seconds between two writers (up to the election's lease duration, 15 s, after a writer
// dies; up to its retry period, 2 s, after a graceful handover, which releases the Lease) is
// in every replica's history but in no Event.

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

// elect stands in the election until ctx ends; while elected, send writes. Losing the
// Lease (a renew deadline missed) ends the term, and it stands again.
func (w *Writer) elect(ctx context.Context) {
	lk := &patientLock{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: w.opts.Namespace, Name: w.opts.Name},
		Client:     w.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: w.opts.Identity},
	}, w: w}
	cfg := leaderelection.LeaderElectionConfig{
		Lock:            lk,
		LeaseDuration:   or(w.opts.LeaseDuration, 15*time.Second),
		RenewDeadline:   or(w.opts.RenewDeadline, 10*time.Second),
		RetryPeriod:     or(w.opts.RetryPeriod, 2*time.Second),
		ReleaseOnCancel: true,
		Name:            w.opts.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			// The term is its context's: client-go cancels it when the Lease is lost or
			// released, and starts this callback on a goroutine of its own, which may run
			// after OnStoppedLeading; the term ends with its context either way.
			OnStartedLeading: w.write,
			OnStoppedLeading: func() {},
			OnNewLeader: func(identity string) {
				if identity != w.opts.Identity {
					w.logger.Info("another replica writes Kubernetes Events", "writer", identity)
				}
			},
		},
	}
	// client-go's elector logs every failed request at each retry; patientLock logs the
	// refusals it paces (forbidden, namespace missing) once, so the elector's copies go.
	ctx = klog.NewContext(ctx, logr.New(quietSink{klog.Background().GetSink()}))
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(cfg)
		if err != nil {
			w.logger.Error("cannot stand in the Events writer election; no Events will be written", "err", err)
			return
		}
		le.Run(ctx)
	}
}

// The pause after the election's namespace was found missing: it starts at missingFirst and
// doubles up to a minute, so a namespace created just after start is found soon and a
// mistaken --events.lock costs a request a minute.
const missingFirst = 4 * time.Second

// patientLock is the election's Lease lock, which after a refusal for lack of permission
// (the Role for the election missing, or naming another Lease) logs it once and asks again
// only a minute later, and after finding the Lease's namespace missing logs it once and asks
// again after a pause growing to a minute: client-go's elector would otherwise ask, and log,
// every 2 s. When the namespace is found again, that is logged once too.
type patientLock struct {
	resourcelock.Interface
	w       *Writer
	until   atomic.Int64 // Unix ns before which the next request waits
	missing atomic.Int64 // the pause after the namespace was last found missing; 0: found
}

func (l *patientLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	if err := l.wait(ctx); err != nil {
		return nil, nil, err
	}
	r, b, err := l.Interface.Get(ctx)
	return r, b, l.check(err)
}

func (l *patientLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	if err := l.wait(ctx); err != nil {
		return err
	}
	return l.check(l.Interface.Create(ctx, r))
}

func (l *patientLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	if err := l.wait(ctx); err != nil {
		return err
	}
	return l.check(l.Interface.Update(ctx, r))
}

func (l *patientLock) wait(ctx context.Context) error {
	d := time.Until(time.Unix(0, l.until.Load()))
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (l *patientLock) check(err error) error {
	if err == nil && l.missing.Swap(0) != 0 {
		l.w.logger.Info("the Events writer election's namespace exists now; standing in the election",
			"lease", l.w.opts.Namespace+"/"+l.w.opts.Name)
	}
	if missingNamespace(err) {
		d := time.Duration(l.missing.Load())
		if d == 0 {
			l.w.logger.Error("cannot stand in the Events writer election: its namespace does not exist; create the namespace "+l.w.opts.Namespace+", or name a Lease in an existing one with --events.lock; no Events are written, metrics, alerts and pages are unaffected, and it asks again at most every minute",
				"lease", l.w.opts.Namespace+"/"+l.w.opts.Name, "err", err)
		}
		d = min(max(2*d, missingFirst), forbiddenPause)
		l.missing.Store(int64(d))
		l.until.Store(time.Now().Add(d).UnixNano())
	}
	if apierrors.IsForbidden(err) {
		l.until.Store(time.Now().Add(forbiddenPause).UnixNano())
		if l.w.electionLogged.CompareAndSwap(false, true) {
			l.w.logger.Error("cannot stand in the Events writer election: grant the exporter's ServiceAccount get, create and update on its election Lease (the chart and components/events do); no Events are written, metrics, alerts and pages are unaffected, and it asks again every minute",
				"lease", l.w.opts.Namespace+"/"+l.w.opts.Name, "err", err)
		}
	}
	return err
}

// missingNamespace reports whether err says the namespace of a request is missing: a Lease
// the election creates is not found only when its namespace is not.
func missingNamespace(err error) bool {
	var status apierrors.APIStatus
	return apierrors.IsNotFound(err) && errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == "namespaces"
}

// quietSink is client-go's logger without the errors of requests patientLock paces and logs.
type quietSink struct{ logr.LogSink }

func (s quietSink) Error(err error, msg string, kv ...any) {
	if apierrors.IsForbidden(err) || missingNamespace(err) {
		return
	}
	s.LogSink.Error(err, msg, kv...)
}

func (s quietSink) WithValues(kv ...any) logr.LogSink { return quietSink{s.LogSink.WithValues(kv...)} }
func (s quietSink) WithName(name string) logr.LogSink { return quietSink{s.LogSink.WithName(name)} }

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
