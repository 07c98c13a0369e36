package events

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// startWriter is a writer over a fake clientset that writes as if elected.
func startWriter(t *testing.T, opts Options) (*Writer, *fake.Clientset, *prometheus.Registry, *syncbuffer.Buffer) {
	t.Helper()
	client := fake.NewClientset()
	reg := prometheus.NewRegistry()
	var logs syncbuffer.Buffer
	if opts.Classes == nil {
		opts.Classes = []lock.Class{lock.ClassLeaderElection}
	}
	w := New(client, opts, slog.New(slog.NewTextHandler(&logs, nil)), reg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.write(ctx) }() // a term, as if elected
	t.Cleanup(func() { cancel(); <-done })
	for !w.writing() {
		time.Sleep(time.Millisecond)
	}
	return w, client, reg, &logs
}

func listEvents(t *testing.T, client *fake.Clientset, ns string) []eventsv1.Event {
	t.Helper()
	l, err := client.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func waitEvents(t *testing.T, client *fake.Clientset, ns string, n int) []eventsv1.Event {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		evs := listEvents(t, client, ns)
		if len(evs) >= n {
			return evs
		}
		if time.Now().After(end) {
			t.Fatalf("%d Events written, want %d", len(evs), n)
		}
	}
}

// What the writer writes, the rebuild reads back into the history the exporter observed:
// the same holders, endings and times, each marked rebuilt, and never the current tenure.
func TestRebuildReadsBackTheHistoryTheWriterSaw(t *testing.T) {
	w, client, _, _ := startWriter(t, Options{})
	f := newFeed(t, "kube-system", "controller", w)
	f.see("a", 0, true)
	f.see("a", 2*time.Second, true)
	f.see("b", 20*time.Second, true) // a expired at 17 s
	f.see("b", 22*time.Second, true)
	f.see("", 30*time.Second, true)
	f.see("c", 31*time.Second, true)
	f.see("c", 33*time.Second, true)
	evs := waitEvents(t, client, "kube-system", 3)
	for _, ev := range evs {
		if ev.ReportingController != ReportingController || ev.Regarding.Name != "controller" || ev.Action == "" || ev.Note == "" {
			t.Errorf("Event %s %q: regarding %s, controller %q, action %q; want the lock, %q, an action", ev.Reason, ev.Note, ev.Regarding.Name, ev.ReportingController, ev.Action, ReportingController)
		}
	}
	observed := f.prev.History().Snapshot().Tenures
	h := &History{}
	st, err := Rebuild(context.Background(), client, anyLock, nil, lock.DefaultHistory.Tenures, h)
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != 3 || st.Locks != 1 || st.Skipped != (Skipped{}) {
		t.Errorf("rebuild read %+v, want 3 Events of 1 lock, all readable", st)
	}
	rebuilt := h.Tenures(string(evs[0].Regarding.UID))
	if len(rebuilt) != 3 || len(observed) != 3 || rebuilt[2].Ended != lock.Holding {
		t.Fatalf("rebuilt %+v and observed %+v: want the three, c's still open", rebuilt, observed)
	}
	rebuilt = rebuilt[:2]
	// The Events' times are when the writer wrote them, the test's wall clock, not the feed's
	// synthetic one: compare holders and endings here (TestRebuiltTenuresKeepTheNotesTimes
	// checks the times), and the length of a's tenure, whose start only its note says.
	for i, r := range rebuilt {
		o := observed[i]
		if r.Holder != o.Holder || r.Ended != o.Ended || !r.Rebuilt || o.Rebuilt {
			t.Errorf("tenure %d rebuilt %+v, observed %+v: want the same holder and ending, only the rebuilt one marked", i, r, o)
		}
	}
	if got, want := rebuilt[0].To-rebuilt[0].From, observed[0].To-observed[0].From; got != want {
		t.Errorf("a's tenure lasted %v rebuilt, %v observed", time.Duration(got)*time.Microsecond, time.Duration(want)*time.Microsecond)
	}
}

// Rebuilt times come from the Events' times and what their notes measured: a change's
// Event is written when the exporter saw the new holder, its note says how long the lock
// was leaderless before, and a release's or expiry's says how long the holder held it.
func TestRebuiltTenuresKeepTheNotesTimes(t *testing.T) {
	s := func(sec float64) int64 { return t0.Add(time.Duration(sec * float64(time.Second))).UnixMicro() }
	var ts tenures
	ts.apply(s(20), Change{Reason: ReasonLeaderChanged, Old: "a", New: "b", Held: 17 * time.Second, Ended: lock.Expired, Leaderless: 3 * time.Second})
	ts.apply(s(30), Change{Reason: ReasonLeaseReleased, Old: "b", Held: 10 * time.Second, Ended: lock.Released, Leaderless: unknown})
	ts.apply(s(31), Change{Reason: ReasonLeaderChanged, Old: "b", New: "c", Held: 10 * time.Second, Ended: lock.Released, Leaderless: time.Second})
	ts.apply(s(70), Change{Reason: ReasonLeaseExpired, Old: "c", Held: 24 * time.Second, Ended: lock.Expired, Leaderless: 15 * time.Second})
	ts.apply(s(90), Change{Reason: ReasonLeaderChanged, Old: "c", New: "d", Held: 24 * time.Second, Ended: lock.Expired, Leaderless: 35 * time.Second})
	want := []lock.Tenure{
		{Holder: "a", From: s(0), LastRenew: s(17), To: s(17), Ended: lock.Expired, Rebuilt: true},
		{Holder: "b", From: s(20), LastRenew: s(30), To: s(30), Ended: lock.Released, Live: true, Rebuilt: true},
		{Holder: "c", From: s(31), LastRenew: s(55), To: s(55), Ended: lock.Expired, Live: true, Rebuilt: true},
	}
	want = append(want, lock.Tenure{Holder: "d", From: s(90), LastRenew: s(90), Live: true, Rebuilt: true})
	got := ts.last(10)
	if len(got) != len(want) {
		t.Fatalf("rebuilt %+v, want %+v (d's still open: the pages judge it against the Lease)", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("tenure %d: rebuilt %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := ts.last(2); len(got) != 2 || got[0].Holder != "c" {
		t.Errorf("last(2) = %+v, want the newest two", got)
	}
	// d hands over to e while no replica writes; e releases, then f takes over: d's tenure
	// ended, unknown how, when e's began, and never overlaps it.
	ts.apply(s(120), Change{Reason: ReasonLeaseReleased, Old: "e", Held: 20 * time.Second, Ended: lock.Released, Leaderless: unknown})
	ts.apply(s(121), Change{Reason: ReasonLeaderChanged, Old: "e", New: "f", Held: 20 * time.Second, Ended: lock.Released, Leaderless: time.Second})
	got = ts.last(10)
	d, e := got[3], got[4]
	if d.Holder != "d" || d.Ended != lock.Unknown || d.To != s(100) || e.Holder != "e" || e.From != s(100) || e.To != s(120) {
		t.Errorf("after a change no Event recorded: d %+v, e %+v; want d ended unknown at 100 s, when e's 20 s began", d, e)
	}
}

// A tenure whose Events show it end but neither begin nor last (the first holder's, when
// the writer saw its release and the take that followed only in a relist) is kept, its start
// unknown: the Events say it was held and how it ended, and dropping it would leave the
// rebuilt history a holder short of the observed one.
func TestRebuiltTenureOfUnknownLengthIsKept(t *testing.T) {
	s := func(sec float64) int64 { return t0.Add(time.Duration(sec * float64(time.Second))).UnixMicro() }
	var ts tenures
	ts.apply(s(20), Change{Reason: ReasonLeaseReleased, Old: "a", Held: unknown, Ended: lock.Released, Leaderless: unknown})
	ts.apply(s(21), Change{Reason: ReasonLeaderChanged, Old: "a", New: "b", Held: unknown, Ended: lock.Released, Leaderless: unknown})
	ts.apply(s(40), Change{Reason: ReasonLeaderChanged, Old: "c", New: "d", Held: unknown, Ended: lock.Unknown, Leaderless: unknown})
	want := []lock.Tenure{
		{Holder: "a", LastRenew: s(20), To: s(20), Ended: lock.Released, Rebuilt: true},
		{Holder: "b", From: s(21), LastRenew: s(40), To: s(40), Ended: lock.Unknown, Live: true, Rebuilt: true}, // until the next known change
		{Holder: "c", LastRenew: s(40), To: s(40), Ended: lock.Unknown, Rebuilt: true},
		{Holder: "d", From: s(40), LastRenew: s(40), Rebuilt: true},
	}
	got := ts.last(10)
	if len(got) != len(want) {
		t.Fatalf("rebuilt %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("tenure %d: rebuilt %+v, want %+v", i, got[i], want[i])
		}
	}
	if got[0].StartKnown() || got[2].StartKnown() || !got[1].StartKnown() {
		t.Errorf("StartKnown: a %v, b %v, c %v; want false, true, false", got[0].StartKnown(), got[1].StartKnown(), got[2].StartKnown())
	}
}

// The bucket bounds the Events whatever happens at once, and every one it turns away is
// counted.
func TestTokenBucketBoundsEventsAndCountsTheDropped(t *testing.T) {
	w, client, reg, _ := startWriter(t, Options{Classes: []lock.Class{lock.ClassNodeHeartbeat}, QPS: 0.001, Burst: 5})
	for i := range 200 {
		f := newFeed(t, "kube-node-lease", "node-"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+time.Duration(i).String(), w)
		f.uid = "0b7d2a8e-4c1f-4d2a-9e3b-" + strings.Repeat("0", 9) + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) + "0"
		f.see("n", 0, true)
		w.Gone(f.prev, t0.Add(time.Second).UnixMicro(), true)
	}
	waitEvents(t, client, "kube-node-lease", 5)
	time.Sleep(200 * time.Millisecond)
	if n := len(listEvents(t, client, "kube-node-lease")); n != 5 {
		t.Errorf("%d Events written, want the bucket's 5", n)
	}
	if got := testutil.ToFloat64(w.dropped.WithLabelValues(droppedRateLimited)); got != 195 {
		t.Errorf("lease_exporter_events_dropped_total{cause=rate_limited} %v, want 195", got)
	}
	if got := testutil.ToFloat64(w.written.WithLabelValues(ReasonLeaseDeleted)); got != 5 {
		t.Errorf("lease_exporter_events_written_total{reason=LeaseDeleted} %v, want 5", got)
	}
	if _, err := reg.Gather(); err != nil {
		t.Error(err)
	}
}

// Events forbidden by RBAC: one clear log line naming the permission, a counter, and a
// minute's pause in which nothing more is asked of the API server.
func TestForbiddenEventsLogOncePauseAndCount(t *testing.T) {
	w, client, _, logs := startWriter(t, Options{})
	var creates atomic.Int32
	client.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		creates.Add(1)
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", nil)
	})
	f := newFeed(t, "ns", "l", w)
	f.see("a", 0, true)
	f.see("b", 20*time.Second, true)
	for end := time.Now().Add(10 * time.Second); testutil.ToFloat64(w.dropped.WithLabelValues(droppedForbidden)) < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the refusal was never counted")
		}
	}
	for i := 3; i < 50; i++ {
		f.see(string(rune('a'+i%20)), time.Duration(i)*20*time.Second, true)
	}
	time.Sleep(200 * time.Millisecond)
	if n := creates.Load(); n != 1 {
		t.Errorf("%d create requests, want 1: writing pauses after a refusal", n)
	}
	if got := testutil.ToFloat64(w.dropped.WithLabelValues(droppedForbidden)); got != 48 {
		t.Errorf("lease_exporter_events_dropped_total{cause=forbidden} %v, want 48 (1 refused, 47 paused)", got)
	}
	if n := strings.Count(logs.String(), "Kubernetes Events forbidden"); n != 1 || !strings.Contains(logs.String(), "create and patch on events.events.k8s.io") {
		t.Errorf("log:\n%s\nwant one line naming the missing permission", logs.String())
	}
}

// Two writers in the moment one loses its Lease and the next takes it may both write one
// change: the rebuild reads it once, by the version of the lock it regards.
func TestRebuildReadsAChangeWrittenTwiceOnce(t *testing.T) {
	client := fake.NewClientset()
	at := time.Now().Add(-time.Minute)
	for i, instance := range []string{"lease-exporter-x", "lease-exporter-y", "lease-exporter-x"} {
		c := Change{Reason: ReasonLeaderChanged, Old: "a", New: "b", Held: time.Minute, Ended: lock.Released, Leaderless: time.Second}
		rv := "7"
		if i == 2 { // a later change, a different version
			c = Change{Reason: ReasonLeaderChanged, Old: "b", New: "c", Held: 30 * time.Second, Ended: lock.Released, Leaderless: time.Second}
			rv = "9"
		}
		ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("l.%d", i)},
			EventTime:           metav1.NewMicroTime(at.Add(time.Duration(i) * 30 * time.Second)),
			ReportingController: ReportingController, ReportingInstance: instance, Reason: c.Reason, Note: c.Note(),
			Regarding: corev1.ObjectReference{Kind: "Lease", Namespace: "ns", Name: "l", UID: "u-1", ResourceVersion: rv}}
		if err := client.Tracker().Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	h := &History{}
	if _, err := Rebuild(context.Background(), client, anyLock, nil, 10, h); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tn := range h.Tenures("u-1") {
		got = append(got, tn.Holder+"/"+tn.Ended.String())
	}
	if want := []string{"a/released", "b/released", "c/"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rebuilt %v, want %v: the duplicate read once", got, want)
	}
}

// A namespace being deleted refuses Events with 403 too, but no permission is missing: the
// refusal is counted as rejected, and nothing is paused or logged as RBAC.
func TestTerminatingNamespaceIsNoMissingPermission(t *testing.T) {
	w, client, _, logs := startWriter(t, Options{})
	client.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		err := apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", fmt.Errorf("namespace ns is being terminated"))
		err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
		return true, nil, err
	})
	f := newFeed(t, "ns", "l", w)
	f.see("a", 0, true)
	f.see("b", 20*time.Second, true)
	for end := time.Now().Add(10 * time.Second); testutil.ToFloat64(w.dropped.WithLabelValues(droppedRejected)) < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the refusal was never counted as rejected")
		}
	}
	if got := testutil.ToFloat64(w.dropped.WithLabelValues(droppedForbidden)); got != 0 || !w.budget.pausedUntil("ns").IsZero() || strings.Contains(logs.String(), "forbidden") {
		t.Errorf("a terminating namespace counted %v forbidden, paused until %v, logged:\n%s", got, w.budget.pausedUntil("ns"), logs.String())
	}
}

// refusingLock is an election lock the API server refuses, counting the requests.
type refusingLock struct {
	resourcelock.Interface
	calls atomic.Int32
}

func (l *refusingLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	l.calls.Add(1)
	return nil, nil, apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "lease-exporter-events", nil)
}

// A refused election Lease is logged once, naming it, and asked for again only after the
// pause, not on client-go's every 2 s retry.
func TestRefusedElectionAsksAgainOnlyAfterAPause(t *testing.T) {
	var logs syncbuffer.Buffer
	w := New(fake.NewClientset(), Options{Namespace: "monitoring", Name: "lease-exporter-events"}, slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
	inner := &refusingLock{}
	l := &patientLock{Interface: inner, w: w}
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, _, err := l.Get(ctx)
		cancel()
		if err == nil {
			t.Fatal("a refused Get succeeded")
		}
	}
	if n := inner.calls.Load(); n != 1 {
		t.Errorf("%d requests in 100 ms after a refusal, want 1", n)
	}
	if n := strings.Count(logs.String(), "cannot stand in the Events writer election"); n != 1 || !strings.Contains(logs.String(), "monitoring/lease-exporter-events") {
		t.Errorf("log:\n%s\nwant one line naming the election Lease", logs.String())
	}
}

// missingNamespaceLock is an election lock whose namespace does not exist until exists is
// set: its Get finds no Lease and its Create no namespace, as the API server answers.
type missingNamespaceLock struct {
	resourcelock.Interface
	exists atomic.Bool
	calls  atomic.Int32
}

func (l *missingNamespaceLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	l.calls.Add(1)
	return nil, nil, apierrors.NewNotFound(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "lease-exporter-events")
}

func (l *missingNamespaceLock) Create(context.Context, resourcelock.LeaderElectionRecord) error {
	l.calls.Add(1)
	if l.exists.Load() {
		return nil
	}
	return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "monitoring")
}

// A missing election namespace is logged once, saying what is missing and how to fix it;
// the lock asks again after a pause that doubles up to a minute, not every 2 s; and the
// namespace found again is logged once.
func TestMissingElectionNamespaceLogsOnceAndBacksOff(t *testing.T) {
	var logs syncbuffer.Buffer
	w := New(fake.NewClientset(), Options{Namespace: "monitoring", Name: "lease-exporter-events"}, slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
	inner := &missingNamespaceLock{}
	l := &patientLock{Interface: inner, w: w}
	try := func() error { // one round of client-go's elector: Get, then Create on NotFound
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, _, err := l.Get(ctx); !apierrors.IsNotFound(err) {
			return err
		}
		return l.Create(ctx, resourcelock.LeaderElectionRecord{})
	}
	var pauses []time.Duration
	for range 6 {
		if err := try(); !missingNamespace(err) {
			t.Fatalf("err %v, want the namespace missing", err)
		}
		pauses = append(pauses, time.Duration(l.missing.Load()))
		if try() == nil || inner.calls.Load() != int32(2*len(pauses)) {
			t.Fatalf("%d requests after %d rounds: asked again within the pause", inner.calls.Load(), len(pauses))
		}
		l.until.Store(0) // the pause over
	}
	if want := []time.Duration{4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute}; fmt.Sprint(pauses) != fmt.Sprint(want) {
		t.Errorf("pauses %v, want %v", pauses, want)
	}
	inner.exists.Store(true)
	if err := try(); err != nil {
		t.Fatal(err)
	}
	if err := try(); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if n := strings.Count(out, "its namespace does not exist"); n != 1 || !strings.Contains(out, "create the namespace monitoring, or name a Lease in an existing one with --events.lock") {
		t.Errorf("log:\n%s\nwant one line naming the missing namespace and the fix", out)
	}
	if n := strings.Count(out, "namespace exists now"); n != 1 {
		t.Errorf("log:\n%s\nwant the recovery logged once", out)
	}
}
