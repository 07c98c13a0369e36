package events

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/sharding"
)

// ReportingController is the Events' reportingController: kubectl shows it as their source,
// and the rebuild lists the Events by it.
const ReportingController = "lease-exporter"

// sweepInterval is how often the writer looks for expiries and missing expected locks, which
// no write to a lock announces.
const sweepInterval = 2 * time.Second

// Writer writes the Events. It is the informer's Observer (Observed, Gone), so it sees every
// observation in order; it writes only while this replica is the elected writer (Run).
type Writer struct {
	*tracker
	opts   Options
	client kubernetes.Interface
	logger *slog.Logger
	budget *budget

	// term is the recorder of the current writing term, nil while another replica writes.
	// Each term has its own broadcaster, started with the term's context: Events still
	// queued or retrying when leadership is lost are abandoned, not written beside the next
	// writer's.
	term atomic.Pointer[events.EventRecorder]

	forbiddenLogged   atomic.Bool
	rejectedLogged    atomic.Bool
	unreachableLogged atomic.Bool // the first write that did not reach the API server was logged
	electionLogged    atomic.Bool // the first refusal of the election's Lease was logged

	written *prometheus.CounterVec
	dropped *prometheus.CounterVec
	retries prometheus.Counter
	writer  prometheus.Gauge

	done sync.WaitGroup
}

var _ informer.Observer = (*Writer)(nil)

// The causes of lease_exporter_events_dropped_total.
const (
	droppedRateLimited = "rate_limited"
	droppedForbidden   = "forbidden"
	droppedRejected    = "rejected"
	droppedLockBudget  = "lock_budget"
)

// New builds the writer over a client of the API server. Nothing is written until Run.
func New(client kubernetes.Interface, opts Options, logger *slog.Logger, reg prometheus.Registerer) *Writer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.QPS <= 0 {
		opts.QPS = DefaultQPS
	}
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	constLabels := sharding.ConstLabels(sharding.Label(opts.Shard, opts.TotalShards))
	f := promauto.With(reg)
	w := &Writer{opts: opts, client: client, logger: logger,
		budget: newBudget(opts.QPS, opts.Burst),
		written: f.NewCounterVec(prometheus.CounterOpts{
			Name:        "lease_exporter_events_written_total",
			Help:        "Kubernetes Events the API server accepted from this replica, by reason (a repeat aggregated into an Event's series counts once more).",
			ConstLabels: constLabels,
		}, []string{"reason"}),
		dropped: f.NewCounterVec(prometheus.CounterOpts{
			Name:        "lease_exporter_events_dropped_total",
			Help:        "Kubernetes Events this replica did not write, by cause: rate_limited (the token bucket, --events.qps and --events.burst, was empty), lock_budget (its lock had spent its own budget, 5 Events and one more a minute), forbidden (RBAC or an admission policy refused it, or writing in its namespace was paused for a minute after a refusal), rejected (the API server refused it otherwise, as in a namespace being deleted).",
			ConstLabels: constLabels,
		}, []string{"cause"}),
		retries: f.NewCounter(prometheus.CounterOpts{
			Name:        "lease_exporter_events_write_retries_total",
			Help:        "Event writes that did not reach the API server; client-go's broadcaster retries each up to 12 times, 10 s apart.",
			ConstLabels: constLabels,
		}),
		writer: f.NewGauge(prometheus.GaugeOpts{
			Name:        "lease_exporter_events_writer",
			Help:        "1 while this replica is the elected writer of its shard's Events, else 0: exactly one replica per shard should be 1.",
			ConstLabels: constLabels,
		}),
	}
	for _, r := range Reasons {
		w.written.WithLabelValues(r)
	}
	for _, c := range []string{droppedRateLimited, droppedLockBudget, droppedForbidden, droppedRejected} {
		w.dropped.WithLabelValues(c)
	}
	w.tracker = newTracker(opts.Classes, opts.Expected, w.send)
	return w
}

// write writes Events for one term of leadership, until ctx (the term's) ends: a
// broadcaster of its own, whose queued and retrying Events end with the term.
func (w *Writer) write(ctx context.Context) {
	if ctx.Err() != nil {
		return // the term ended before client-go ran this
	}
	b := events.NewBroadcaster(&sink{inner: &events.EventSinkImpl{Interface: w.client.EventsV1()}, w: w})
	// The broadcaster logs every failed write with the whole Event through klog; the sink
	// counts and logs them (result), once each, instead.
	if err := b.StartRecordingToSinkWithContext(klog.NewContext(ctx, logr.Discard())); err != nil {
		w.logger.Error("cannot start the Kubernetes Event broadcaster; no Events this term", "err", err)
		return
	}
	defer b.Shutdown()
	var rec events.EventRecorder = b.NewRecorder(scheme.Scheme, ReportingController)
	w.term.Store(&rec)
	w.writer.Set(1)
	w.logger.Info("elected to write Kubernetes Events", "election", w.opts.Namespace+"/"+w.opts.Name, "identity", w.opts.Identity)
	<-ctx.Done()
	w.term.Store(nil)
	w.writer.Set(0)
	w.logger.Info("no longer writing Kubernetes Events", "election", w.opts.Namespace+"/"+w.opts.Name, "identity", w.opts.Identity)
}

// send writes one Event, if this replica is the writer and a token is left, and reports
// whether it is the writer. It never blocks: the store's goroutine calls it, and the
// broadcaster writes on its own goroutines.
func (w *Writer) send(ref *corev1.ObjectReference, eventType string, c Change) bool {
	rec := w.term.Load()
	if rec == nil {
		return false
	}
	if cause := w.budget.take(ref, w.opts.now()); cause != "" {
		w.dropped.WithLabelValues(cause).Inc()
		return true
	}
	(*rec).Eventf(ref, nil, eventType, c.Reason, actionOf(c.Reason), "%s", c.Note())
	return true
}

// Run writes Events until ctx ends: it stands in the writer's election, writes while
// elected, and sweeps view for expiries and missing expected locks. Wait returns once it has
// released the election.
func (w *Writer) Run(ctx context.Context, view SweptView) {
	w.logger.Info("writing Kubernetes Events once elected", "election", w.opts.Namespace+"/"+w.opts.Name,
		"identity", w.opts.Identity, "classes", w.opts.Classes, "qps", w.opts.QPS, "burst", w.opts.Burst)
	w.done.Add(2)
	go func() {
		defer w.done.Done()
		w.elect(ctx)
	}()
	go func() {
		defer w.done.Done()
		t := time.NewTicker(sweepInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				now := w.opts.now()
				at := view.JudgedAt(now)
				w.sweep(view, view.Has, at.UnixMicro(), !at.Before(now))
				w.budget.forget(now)
			}
		}
	}()
}

// Wait waits for Run's goroutines: the election released, the last term's writing over.
func (w *Writer) Wait() { w.done.Wait() }

// SweptView is what the sweep reads: the informer's view and its expected-lock lookup.
type SweptView interface {
	informer.View
	Has(kind lock.Kind, namespace, name string) bool
}

// Client is the writer's client of the API server, which the rebuild lists Events with.
func (w *Writer) Client() kubernetes.Interface { return w.client }

// Rebuilds reports whether the history is to be rebuilt from the Events (Options.Rebuild).
func (w *Writer) Rebuilds() bool { return w.opts.Rebuild }

// writing reports whether this replica is the elected writer now.
func (w *Writer) writing() bool { return w.term.Load() != nil }
