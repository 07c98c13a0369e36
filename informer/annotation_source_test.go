package informer

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/lockobj"
	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
)

var lockMeta = lockobj.AnnotationLock

const clientGoRecord, pythonRecord = lockobj.ClientGoRecord, lockobj.PythonRecord

// The annotation lock kinds' sources, as addSources builds them.
var configMapSource, endpointsSource = sourceOf(lock.KindConfigMap).(annotationSource), sourceOf(lock.KindEndpoints).(annotationSource)

// annotationFixture runs the informer over a fake clientset (Leases) and a fake metadata
// client (ConfigMaps, Endpoints) with every lock kind enabled.
type annotationFixture struct {
	leases *Cache
	meta   *metadatafake.FakeMetadataClient
	typed  *fake.Clientset
	reg    *prometheus.Registry
	log    *syncbuffer.Buffer
}

func newAnnotationFixture(t *testing.T, opts Options, objs map[annotationSource][]*metav1.PartialObjectMetadata) *annotationFixture {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	f := &annotationFixture{meta: metadatafake.NewSimpleMetadataClient(scheme), typed: fake.NewClientset(),
		reg: prometheus.NewRegistry(), log: &syncbuffer.Buffer{}}
	for src, list := range objs {
		for _, o := range list {
			if err := f.meta.Tracker().Create(src.gvr, o, o.Namespace); err != nil {
				t.Fatal(err)
			}
		}
	}
	opts.Locks = []lock.Kind{lock.KindLease, lock.KindConfigMap, lock.KindEndpoints}
	l, err := NewForClients(Clients{List: f.typed, Watch: f.typed, MetaList: f.meta, MetaWatch: f.meta}, opts, slog.New(slog.NewTextHandler(f.log, nil)), f.reg)
	if err != nil {
		t.Fatal(err)
	}
	f.leases = l
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); l.Shutdown() })
	l.Start(ctx)
	if err := l.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	// The fakes do not replay events from a resource version: wait for every watch to open.
	f.waitFor(t, "every watch open", func() bool { return testutil.ToFloat64(l.health.metrics.watchUp) == 1 })
	return f
}

func (f *annotationFixture) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// records returns the cached locks by "Kind namespace/name".
func (f *annotationFixture) records() map[string]*lock.Lease {
	out := map[string]*lock.Lease{}
	f.leases.Range(func(l *lock.Lease) { out[l.Kind().String()+" "+l.StoreKey()] = l })
	return out
}

func (f *annotationFixture) update(t *testing.T, src annotationSource, o *metav1.PartialObjectMetadata) {
	t.Helper()
	if err := f.meta.Tracker().Update(src.gvr, o, o.Namespace); err != nil {
		t.Fatal(err)
	}
}

// TestAnnotationLocksListedAndWatched: ConfigMap and Endpoints locks are listed and watched
// metadata-only beside Leases; objects without the leader annotation are never cached, an
// object gaining it becomes a lock and one losing it stops being one.
func TestAnnotationLocksListedAndWatched(t *testing.T) {
	f := newAnnotationFixture(t, Options{}, map[annotationSource][]*metav1.PartialObjectMetadata{
		configMapSource: {lockMeta("a", "py", "u1", "1", pythonRecord), lockMeta("a", "plain", "u2", "1", "-")},
		endpointsSource: {lockMeta("a", "ep", "u3", "1", clientGoRecord)},
	})
	if _, err := f.typed.CoordinationV1().Leases("a").Create(context.Background(), rawLeaseIn("a", "py"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitFor(t, "the Lease", func() bool { return f.records()["Lease a/py"] != nil })
	got := f.records()
	if len(got) != 3 || got["ConfigMap a/py"] == nil || got["Endpoints a/ep"] == nil {
		t.Fatalf("cached %v, want Lease a/py, ConfigMap a/py and Endpoints a/ep", keys(got))
	}
	if got["ConfigMap a/py"].Holder != "py-1" || got["Endpoints a/ep"].Transitions != 3 {
		t.Fatalf("records %+v %+v", got["ConfigMap a/py"], got["Endpoints a/ep"])
	}

	f.update(t, configMapSource, lockMeta("a", "plain", "u2", "2", clientGoRecord))
	f.waitFor(t, "a ConfigMap gaining the annotation", func() bool { return f.records()["ConfigMap a/plain"] != nil })
	f.update(t, configMapSource, lockMeta("a", "plain", "u2", "3", "-"))
	f.waitFor(t, "a ConfigMap losing the annotation", func() bool { return f.records()["ConfigMap a/plain"] == nil })
	if n := len(f.records()); n != 3 {
		t.Fatalf("%d locks cached, want 3", n)
	}
}

// TestUnreadableRecordCountedAndLoggedOnce: every new version of a broken record counts its
// unreadable fields; the object is logged once, not on every renewal; the lock is exported
// with what could be read and other locks are unaffected.
func TestUnreadableRecordCountedAndLoggedOnce(t *testing.T) {
	f := newAnnotationFixture(t, Options{}, map[annotationSource][]*metav1.PartialObjectMetadata{
		configMapSource: {lockMeta("a", "bad", "u1", "1", `{"holderIdentity":"x","leaseDurationSeconds":"15s"}`),
			lockMeta("a", "good", "u2", "1", pythonRecord)},
	})
	badDuration := f.leases.health.metrics.parseErrors.WithLabelValues("ConfigMap", string(leaderrecord.ReasonBadDuration))
	if got := testutil.ToFloat64(badDuration); got != 1 {
		t.Fatalf("bad_duration counted %v after the list, want 1", got)
	}
	for rv := range []string{"2", "3"} {
		f.update(t, configMapSource, lockMeta("a", "bad", "u1", []string{"2", "3"}[rv], `{"holderIdentity":"x","leaseDurationSeconds":"15s","renewTime":"2026-11-21 12:00:01"}`))
	}
	f.waitFor(t, "two renewals of the broken lock", func() bool { return testutil.ToFloat64(badDuration) == 3 })
	if n := strings.Count(f.log.String(), "only partly readable"); n != 1 {
		t.Fatalf("broken lock logged %d times, want once:\n%s", n, f.log)
	}
	for _, want := range []string{"kind=ConfigMap", "namespace=a", "name=bad", `problems="leaseDurationSeconds: bad_duration"`} {
		if !strings.Contains(f.log.String(), want) {
			t.Errorf("log line lacks %s:\n%s", want, f.log)
		}
	}
	recs := f.records()
	if bad := recs["ConfigMap a/bad"]; bad == nil || bad.Holder != "x" || !bad.HasRenewTime || bad.HasDuration {
		t.Fatalf("broken lock not exported with what could be read: %+v", bad)
	}
	if good := recs["ConfigMap a/good"]; good == nil || !good.HasDuration || good.RecordProblems() != nil {
		t.Fatalf("the other lock was affected: %+v", good)
	}
	if got := testutil.ToFloat64(f.leases.health.metrics.parseErrors.WithLabelValues("Endpoints", string(leaderrecord.ReasonBadTime))); got != 0 {
		t.Fatalf("Endpoints bad_time %v, want 0", got)
	}
	// Repaired, then broken again: a second log line, for a new breakage.
	f.update(t, configMapSource, lockMeta("a", "bad", "u1", "4", pythonRecord))
	f.update(t, configMapSource, lockMeta("a", "bad", "u1", "5", `{"holderIdentity":"x","leaseDurationSeconds":0}`))
	// reportProblems counts before it logs: wait for both, or the check races the log line.
	f.waitFor(t, "the second breakage counted and logged", func() bool {
		return testutil.ToFloat64(badDuration) == 4 && strings.Count(f.log.String(), "only partly readable") >= 2
	})
	if n := strings.Count(f.log.String(), "only partly readable"); n != 2 {
		t.Fatalf("logged %d times after a repair and a new breakage, want 2:\n%s", n, f.log)
	}
}

// TestAnnotationSourceListFilters: the list keeps only locks of this shard; the server-side
// filters (selector, excluded namespaces) reach the metadata client's list and watch.
func TestAnnotationSourceListFilters(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = metav1.AddMetaToScheme(scheme)
	meta := metadatafake.NewSimpleMetadataClient(scheme)
	for _, o := range []*metav1.PartialObjectMetadata{lockMeta("a", "mine", "u1", "1", ""),
		lockMeta("a", "theirs", "u2", "1", ""), lockMeta("a", "plain", "u3", "1", "-")} {
		if err := meta.Tracker().Create(configMapSource.gvr, o, "a"); err != nil {
			t.Fatal(err)
		}
	}
	c := Clients{MetaList: meta, MetaWatch: meta}
	opts := metav1.ListOptions{}
	Options{LeaseSelector: "app=x", ExcludeNamespaces: []string{"b"}}.tweakListOptions()(&opts)
	obj, err := configMapSource.list(context.Background(), c, "a", opts, func(_, name string) bool { return name != "theirs" })
	if err != nil {
		t.Fatal(err)
	}
	items := obj.(*metav1.PartialObjectMetadataList).Items
	if len(items) != 1 || items[0].Name != "mine" {
		t.Fatalf("listed %d items, want only a/mine", len(items))
	}
	w, err := configMapSource.watch(context.Background(), c, "a", opts)
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	for _, a := range meta.Actions() {
		var lo metav1.ListOptions
		switch a := a.(type) {
		case k8stesting.ListActionImpl:
			lo = a.GetListOptions()
		case k8stesting.WatchActionImpl:
			lo = a.ListOptions
		default:
			t.Errorf("unexpected %s", a.GetVerb())
		}
		if a.GetResource().Resource != "configmaps" || lo.LabelSelector != "app=x" || lo.FieldSelector != "metadata.namespace!=b" {
			t.Errorf("%s %s with %+v: filters not applied", a.GetVerb(), a.GetResource(), lo)
		}
	}
	if _, err := configMapSource.list(context.Background(), Clients{}, "a", opts, nil); err == nil {
		t.Error("listing without a metadata client succeeded")
	}
}

func keys(m map[string]*lock.Lease) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func rawLeaseIn(ns, name string) *coordinationv1.Lease {
	l := rawLease("lease-"+name, "", "holder", t0)
	l.Namespace, l.Name, l.ResourceVersion = ns, name, ""
	return l
}

// TestStreamingListStripsNonLocks: during a streaming list the reflector holds every initial
// event until the end; an object that is no lock is held as its key only, and dropped then.
func TestStreamingListStripsNonLocks(t *testing.T) {
	s := newScopes(configMapSource, observeLock, Clients{}, []string{""}, Options{}, time.Now,
		newMetrics(prometheus.NewRegistry()), newHealth(slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()), time.Now))[0]
	plain := lockMeta("a", "plain", "u1", "7", "-")
	plain.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	got, err := s.Transformer()(plain)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := got.(*metav1.PartialObjectMetadata)
	if !ok || m.Namespace != "a" || m.Name != "plain" || m.ResourceVersion != "7" || m.Labels != nil || m.Annotations != nil || m.ManagedFields != nil {
		t.Fatalf("Transformer kept %#v, want the key and resource version only", got)
	}
	lock, _ := s.Transformer()(lockMeta("a", "lock", "u2", "8", pythonRecord))
	_ = s.Replace([]any{got, lock}, "8")
	if recs := s.list(nil); len(recs) != 1 || recs[0].Name() != "lock" {
		t.Fatalf("cached %d records after the streaming list, want only a/lock", len(recs))
	}
}
