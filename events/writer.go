package events

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// The defaults of the token bucket: a few leader changes a minute are the most a healthy
// cluster makes (a control-plane upgrade moves each component's lock once or twice); a burst
// of 25 takes a rolling restart of a few dozen operators whole.
const (
	DefaultQPS   = 0.5
	DefaultBurst = 25
)

// forbiddenPause is how long the writer stops asking in a namespace after the API server
// refused it an Event there (403: RBAC, or an admission webhook or policy): neither changes by
// itself within seconds, and retrying every Event would be a request per change for nothing.
// Every 403 pauses only its namespace: an Event is created in its lock's namespace, and RBAC
// (a RoleBinding) and admission policies are granted or set per namespace, so one namespace's
// refusal says nothing about the others'. (A ResourceQuota never refuses one: Kubernetes
// exempts Events from quota in both API groups; TestEventsAreWrittenUnderAResourceQuotaOfNone.)
const forbiddenPause = time.Minute

// sweepInterval is how often the writer looks for expiries and missing expected locks, which
// no write to a lock announces.
const sweepInterval = 2 * time.Second

// Options configure the Events (the --events flags).
type Options struct {
	// Classes of locks whose changes make Events; others make none.
	Classes []lock.Class
	// Expected are the locks that must exist (--expect): ExpectedLeaseMissing.
	Expected []lock.Ref
	// QPS and Burst are the token bucket every Event takes a token from: one per writer, so
	// one for the cluster, or per shard.
	QPS   float64
	Burst int
	// Namespace and Name are the writer's election Lease (Elect).
	Namespace, Name string
	// Identity names this replica in that election.
	Identity string
	// Shard labels the metrics when TotalShards > 1.
	Shard, TotalShards int
	// Election timing; zero means client-go's defaults (15 s, 10 s, 2 s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Rebuild says to rebuild the history from the Events at start (Rebuild).
	Rebuild bool
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

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

// sink is the broadcaster's EventSink: the API's, with every answer counted, and a refusal
// for lack of permission logged once and pausing writes (no retry storm).
type sink struct {
	inner events.EventSink
	w     *Writer
}

func (s *sink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	out, err := s.inner.Create(ctx, ev)
	s.w.result(ev, err)
	return out, err
}

func (s *sink) Update(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	out, err := s.inner.Update(ctx, ev)
	s.w.result(ev, err)
	return out, err
}

func (s *sink) Patch(ctx context.Context, ev *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	out, err := s.inner.Patch(ctx, ev, data)
	if apierrors.IsNotFound(err) {
		return out, err // the broadcaster creates the Event instead; that answer counts
	}
	s.w.result(ev, err)
	return out, err
}

// result counts one answer of the API server to an Event write.
func (w *Writer) result(ev *eventsv1.Event, err error) {
	var status apierrors.APIStatus
	switch {
	case err == nil:
		w.written.WithLabelValues(ev.Reason).Inc()
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// Forbidden too, but no RBAC's doing: the lock's namespace is being deleted (and
		// with it the lock, whose LeaseDeleted cannot be written there).
		w.dropped.WithLabelValues(droppedRejected).Inc()
	case apierrors.IsForbidden(err):
		w.budget.pause(ev.Namespace, w.opts.now().Add(forbiddenPause), droppedForbidden) // before the count, which tests wait for
		w.dropped.WithLabelValues(droppedForbidden).Inc()
		if w.forbiddenLogged.CompareAndSwap(false, true) {
			w.logger.Error("Kubernetes Events forbidden: grant the exporter's ServiceAccount create and patch on events.events.k8s.io (the chart does with events.enabled=true); metrics, alerts and pages are unaffected, and writing in the refused namespace pauses a minute after each refusal",
				"namespace", ev.Namespace, "reason", ev.Reason, "err", err)
		}
	case errors.As(err, &status):
		w.dropped.WithLabelValues(droppedRejected).Inc()
		if w.rejectedLogged.CompareAndSwap(false, true) {
			w.logger.Warn("the API server rejected a Kubernetes Event; later rejections are only counted (lease_exporter_events_dropped_total{cause=\"rejected\"})",
				"namespace", ev.Namespace, "reason", ev.Reason, "err", err)
		}
	default:
		w.retries.Inc()
		if w.unreachableLogged.CompareAndSwap(false, true) {
			w.logger.Warn("cannot reach the API server to write a Kubernetes Event; client-go retries each up to 12 times, 10 s apart, and later failures are only counted (lease_exporter_events_write_retries_total)",
				"namespace", ev.Namespace, "reason", ev.Reason, "err", err)
		}
	}
}
