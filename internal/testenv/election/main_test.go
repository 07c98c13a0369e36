package election_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
)

var capture = flag.Bool("capture", false, "write the annotation values the electors write to lock/leaderrecord/testdata/leaderrecord")

// env is shared by the tests, which run in parallel, each in its own namespace.
var env *testEnv

type testEnv struct {
	cp     *controlplane.ControlPlane
	client kubernetes.Interface
	dir    string
}

// TestMain fails the package, never skips it, when the control plane, python3-kubernetes or
// faketime is missing.
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(testsuite.Main(m, "election", &env, setup))
}

func setup(dir string) (*testEnv, error) {
	if err := election.CheckPython(true); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: filepath.Join(dir, "controlplane")})
	if err != nil {
		return nil, err
	}
	// The tests run in parallel and share this client: at client-go's default 5 QPS its rate
	// limiter held a stalled leader's release for 1.8 s between its read and its write, long
	// enough for the successor to renew in between (CI at b4ff3ad). testsuite's admin client
	// is never throttled for the same reason.
	cfg := cp.Config()
	cfg.QPS, cfg.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return &testEnv{cp: cp, client: client, dir: dir}, nil
}

// Teardown stops the control plane, after printing its processes' logs if a test failed.
func (e *testEnv) Teardown(failed bool) error {
	if failed {
		for _, p := range e.cp.Processes() {
			fmt.Fprintf(os.Stderr, "===== %s log (last 40 lines) =====\n%s\n", p.Name(), testsuite.Tail(p.Logs(), 40))
		}
	}
	return e.cp.Stop()
}

func namespace(t *testing.T, name string) string {
	t.Helper()
	if _, err := env.client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

// record is one state of a lock as the test's watch saw it; times are from the record.
type record struct {
	seen time.Time
	raw  string // the annotation, "" for a Lease
	// present: the object has the annotation (possibly ""); others: its other annotations
	present bool
	others  map[string]string
	holder  string
	renew   time.Time // zero when absent
	parsed  leaderrecord.Record
}

// lockWatch records every state of one lock object that polling finds.
type lockWatch struct {
	t       *testing.T
	mu      sync.Mutex
	records []record
}

// pollInterval bounds how late a record's seen time can be.
const pollInterval = 100 * time.Millisecond

// watchLock follows kind namespace/name until the test ends, reading it every pollInterval
// and recording each new resourceVersion. It polls with GETs, which are quorum reads from
// etcd, rather than watching: on a loaded machine kube-apiserver's watch cache was seen to
// stall ("Too large resource version") and deliver nothing for minutes. Annotation records
// must parse without problems.
func watchLock(t *testing.T, kind election.LockKind, ns, name string) *lockWatch {
	w := &lockWatch{t: t}
	ctx, cancel := context.WithCancel(context.Background())
	get := func() (metav1.Object, error) {
		switch kind {
		case election.LockLease:
			return env.client.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		case election.LockConfigMap:
			return env.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		default:
			return env.client.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{})
		}
	}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		var rv string
		for ctx.Err() == nil {
			if obj, err := get(); err == nil && obj.GetResourceVersion() != rv {
				rv = obj.GetResourceVersion()
				w.add(obj)
			}
			select {
			case <-ctx.Done():
			case <-time.After(pollInterval):
			}
		}
	}()
	return w
}

func (w *lockWatch) add(obj metav1.Object) {
	r := record{seen: time.Now()}
	var annotations map[string]string
	annotationLock := true
	switch o := obj.(type) {
	case *coordinationv1.Lease:
		annotationLock = false
		if h := o.Spec.HolderIdentity; h != nil {
			r.holder = *h
		}
		if o.Spec.RenewTime != nil {
			r.renew = o.Spec.RenewTime.Time
		}
	case *corev1.ConfigMap:
		annotations = o.Annotations
	case *corev1.Endpoints:
		annotations = o.Annotations
	}
	if annotationLock {
		var problems []leaderrecord.Problem
		r.raw, r.present = annotations[leaderrecord.Annotation]
		r.others = maps.Clone(annotations)
		delete(r.others, leaderrecord.Annotation)
		r.parsed, problems = leaderrecord.Parse(r.raw)
		if len(problems) > 0 {
			w.t.Errorf("annotation %q: problems %v", r.raw, problems)
		}
		r.holder = r.parsed.Holder
		if r.parsed.HasRenewTime {
			r.renew = time.UnixMicro(r.parsed.RenewTime)
		}
	}
	w.mu.Lock()
	w.records = append(w.records, r)
	w.mu.Unlock()
}

// waitFor returns the first record (from the start of the watch) that satisfies cond.
func (w *lockWatch) waitFor(timeout time.Duration, what string, cond func(record) bool) record {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if i := slices.IndexFunc(w.all(), cond); i >= 0 {
			return w.all()[i]
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("no record where %s within %v; saw:\n%s", what, timeout, w.dump())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (w *lockWatch) all() []record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.records)
}

func (w *lockWatch) dump() string {
	var b strings.Builder
	for _, r := range w.all() {
		fmt.Fprintf(&b, "  %s holder=%q renew=%s raw=%s\n", r.seen.Format(time.RFC3339Nano), r.holder, r.renew.Format(time.RFC3339Nano), r.raw)
	}
	return b.String()
}

// skew is renewTime minus when the watch delivered it, for the records since from that
// renewed (changed renewTime).
func (w *lockWatch) skews(from time.Time) []time.Duration {
	var out []time.Duration
	var last time.Time
	for _, r := range w.all() {
		if !r.renew.IsZero() && !r.renew.Equal(last) && r.seen.After(from) {
			out = append(out, r.renew.Sub(r.seen))
		}
		last = r.renew
	}
	return out
}

// checkSkew checks the holder's measured clock offset against want. Every sample is renewTime
// minus when the watch delivered it, so its errors only push it below the truth: the write's
// and the watch's latency, and up to 1 s more where the record keeps whole seconds (client-go's
// annotation format). So no sample may be above want (beyond 0.5 s of clock noise), and the
// best one, the largest, must be within 2 s below it; a busy API server can delay any one
// write, such as the first acquisition, by seconds.
func checkSkew(t *testing.T, w *lockWatch, skews []time.Duration, want time.Duration) {
	t.Helper()
	if len(skews) == 0 {
		t.Fatalf("no renewals to measure\n%s", w.dump())
	}
	best := slices.Max(skews)
	if d := best - want; d > 500*time.Millisecond || d < -2*time.Second {
		t.Errorf("largest renewTime - seen = %v (of %v), want %v within -2s..+0.5s\n%s", best, skews, want, w.dump())
	}
}

// writeCapture stores distinct annotation values as golden parser input, with a header
// saying where they came from. Only with -capture.
func writeCapture(t *testing.T, file, source string, rs []record) {
	t.Helper()
	if !*capture {
		return
	}
	var lines []string
	for _, r := range rs {
		if r.raw != "" && !slices.Contains(lines, r.raw) {
			lines = append(lines, r.raw)
		}
	}
	body := "# " + source + "\n# Captured by internal/testenv/election tests with -capture; one annotation value a line.\n" + strings.Join(lines, "\n") + "\n"
	path := filepath.Join("..", "..", "..", "informer", "leaderrecord", "testdata", "leaderrecord", file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
