package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// t0 is the API server's clock when the fixture is judged.
var t0 = time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)

func lease(ns, name, holder string, renewAgo time.Duration, seconds int32, transitions int32) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name), ResourceVersion: "7"},
		Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &seconds, LeaseTransitions: &transitions,
			AcquireTime: &metav1.MicroTime{Time: t0.Add(-5 * time.Minute)}}}
	if holder != "" {
		l.Spec.HolderIdentity = &holder
	}
	if renewAgo != never {
		l.Spec.RenewTime = &metav1.MicroTime{Time: t0.Add(-renewAgo)}
	}
	return l
}

// never is a renewAgo for a Lease without renewTime.
const never = time.Duration(-1 << 63)

// fixture is a cluster of every case the list shows: on time, lagging, expired, released, a
// renewTime 45 s in the API server's future, a coordinated election, an owned Lease, node
// heartbeats on time, expired and never renewed, and a ConfigMap lock.
//
// The fake clientset does not stream lists: the informer lists it (the integration tests
// stream from a real API server).
func fixture(t *testing.T) *source {
	t.Helper()
	sched := lease("kube-system", "kube-scheduler", "sched-a_0c1f", 1200*time.Millisecond, 15, 3)
	sched.Spec.Strategy = ptr.To(coordinationv1.OldestEmulationVersion)
	sched.Spec.PreferredHolder = ptr.To("sched-b_77d2")
	owned := lease("apps", "orders", "orders-7f9c-x2", 20*time.Second, 15, 1)
	owned.OwnerReferences = []metav1.OwnerReference{{Kind: "Deployment", Name: "orders", APIVersion: "apps/v1", UID: "d"}}
	objs := []runtime.Object{
		sched,
		lease("kube-system", "kube-controller-manager", "kcm-a_5e6b", 9*time.Second, 15, 1),
		owned,
		lease("apps", "released", "", 30*time.Second, 15, 2),
		lease("apps", "skewed", "payments-1", -45*time.Second, 15, 0),
		lease("kube-node-lease", "node-1", "node-1", 3*time.Second, 40, 0),
		lease("kube-node-lease", "node-2", "node-2", 2*time.Minute, 40, 0),
		lease("kube-node-lease", "node-3", "node-3", never, 40, 0),
		&coordinationv1beta1.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "sched-a_0c1f"},
			Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "kube-scheduler", BinaryVersion: "1.36.3", EmulationVersion: "1.36",
				Strategy: coordinationv1.OldestEmulationVersion, RenewTime: &metav1.MicroTime{Time: t0.Add(-2 * time.Minute)}}},
		&coordinationv1beta1.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "sched-b_77d2"},
			Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "kube-scheduler", BinaryVersion: "1.35.4", EmulationVersion: "1.35",
				Strategy: coordinationv1.OldestEmulationVersion, RenewTime: &metav1.MicroTime{Time: t0.Add(-40 * time.Minute)}}},
	}
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	record := `{"holderIdentity":"py-a","leaseDurationSeconds":15,"acquireTime":"2026-11-28T02:58:00Z","renewTime":"2026-11-28T02:59:58Z","leaderTransitions":4}`
	cm := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "py-lock", UID: "c", ResourceVersion: "9", Annotations: map[string]string{leaderrecord.Annotation: record}}}
	plain := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "settings", UID: "s", ResourceVersion: "3"}}
	clock := newServerClock(func() time.Time { return t0 })
	clock.lo, clock.hi, clock.seen = 0, 0, true
	client, meta := fake.NewClientset(objs...), metadatafake.NewSimpleMetadataClient(scheme, cm, plain)
	// The fake serves LeaseCandidates in v1beta1, as discovery would say.
	client.Resources = []*metav1.APIResourceList{{GroupVersion: "coordination.k8s.io/v1beta1",
		APIResources: []metav1.APIResource{{Name: "leasecandidates", Namespaced: true, Kind: "LeaseCandidate", Verbs: metav1.Verbs{"list", "watch"}}}}}
	return &source{clients: informer.Clients{List: client, Watch: client, MetaList: meta, MetaWatch: meta}, clock: clock}
}

// runWith runs the command line args against src, returning stdout, stderr and the error.
func runWith(t *testing.T, src *source, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := newRootCommandWith(genericiooptions.IOStreams{Out: &out, ErrOut: &errb}, func(*options) (*source, error) { return src, nil })
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/kubectl-lease -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test ./cmd/kubectl-lease -update rewrites it after a deliberate change); got:\n%s", path, got)
	}
}

// The table judges every standing as the exporter does, flags the renewTime 45 s ahead of
// the API server (tolerance 3.75 s), sums the node heartbeats up with the overdue ones
// named, and says on stderr which clock judged.
func TestListTableGolden(t *testing.T) {
	out, stderr, err := runWith(t, fixture(t), "-A", "--locks", "leases,configmaps")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "list.golden", out)
	if want := "(judged at 2026-11-28T03:00:00Z by the API server's clock (Date header, ±0s); a single read cannot measure a holder's clock skew, -w does)\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

func TestListWideGolden(t *testing.T) {
	out, _, err := runWith(t, fixture(t), "-A", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "list-wide.golden", out)
}

// --class node-heartbeat lists every node heartbeat instead of the summary.
func TestListNodeHeartbeatsGolden(t *testing.T) {
	out, _, err := runWith(t, fixture(t), "-n", "kube-node-lease", "--class", "node-heartbeat", "--no-headers")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "list-node-heartbeats.golden", out)
}

// uidOf is the UID of the lock ns/name in src as the plugin reads it, which an exporter's
// answer about it carries.
func uidOf(t *testing.T, src *source, ns, name string) string {
	t.Helper()
	l, _, err := findLock(context.Background(), src, lock.Kinds, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return l.UID.String()
}

// describe shows the record, the judgement, the candidates (one fresh, one stale) and the
// history an exporter serves, a tenure it rebuilt from Events marked.
func TestDescribeGolden(t *testing.T) {
	src := fixture(t)
	detail := api.Detail{Lease: api.Lease{Namespace: "kube-system", Name: "kube-scheduler", Kind: "Lease", Class: "leader-election"},
		UID: uidOf(t, src, "kube-system", "kube-scheduler"),
		History: &api.History{Tenures: []api.Tenure{
			{Holder: "sched-a_0c1f", From: t0.Add(-50 * time.Minute), To: ptr.To(t0.Add(-30 * time.Minute)), Ended: "released", HeldSeconds: ptr.To(1200.0), Rebuilt: true},
			{Holder: "sched-b_77d2", From: t0.Add(-30 * time.Minute), To: ptr.To(t0.Add(-5*time.Minute - 6*time.Second)), Ended: "expired", HeldSeconds: ptr.To(1494.0), SeenLive: true, GapBeforeSeconds: ptr.To(0.0)},
			{Holder: "sched-a_0c1f", From: t0.Add(-5 * time.Minute), HeldSeconds: ptr.To(300.0), SeenLive: true, GapBeforeSeconds: ptr.To(6.0)},
		}}}
	var asked string
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.String()
		_ = json.NewEncoder(w).Encode(detail)
	}))
	defer exporter.Close()
	out, _, err := runWith(t, src, "describe", "kube-system/kube-scheduler", "--exporter", exporter.URL)
	if err != nil {
		t.Fatal(err)
	}
	if asked != "/api/v1/leases/kube-system/kube-scheduler?kind=Lease" {
		t.Errorf("asked the exporter for %s", asked)
	}
	checkGolden(t, "describe.golden", strings.ReplaceAll(out, exporter.URL, "http://exporter"))
}

// A ConfigMap lock is found by describe after no Lease of that name.
func TestDescribeConfigMapLockGolden(t *testing.T) {
	out, _, err := runWith(t, fixture(t), "describe", "apps/py-lock")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "describe-configmap.golden", out)
}

// -o json is the exporter's JSON of each lock, with the clock that judged.
func TestListJSONIsTheExportersJSON(t *testing.T) {
	out, _, err := runWith(t, fixture(t), "-n", "apps", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got listJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Clock != "api-server" || !got.EvaluatedAt.Equal(t0) || len(got.Leases) != 3 {
		t.Fatalf("clock %q at %v, %d locks: %s", got.Clock, got.EvaluatedAt, len(got.Leases), out)
	}
	want := map[string]string{"orders": "expired", "released": "released", "skewed": "on_time"}
	for _, l := range got.Leases {
		if l.Standing != want[l.Name] {
			t.Errorf("%s stands %s, want %s", l.Name, l.Standing, want[l.Name])
		}
	}
	skewed := got.Leases[2]
	if skewed.Healthy || skewed.RenewTimeAheadSeconds == nil || *skewed.RenewTimeAheadSeconds != 45 || skewed.Problems[0] != skewProblem {
		t.Errorf("the holder 45 s ahead: healthy %v, ahead %v, problems %q", skewed.Healthy, skewed.RenewTimeAheadSeconds, skewed.Problems)
	}
	if got.Leases[0].Owner != "Deployment/orders" {
		t.Errorf("owner %q", got.Leases[0].Owner)
	}
}

// -o yaml is -o json in YAML (node heartbeats summed up, as in the table), and -o name
// prints kubectl's name of every lock, node heartbeats too: names are for scripts.
func TestListYAMLAndNames(t *testing.T) {
	out, _, err := runWith(t, fixture(t), "-A", "--locks", "leases,configmaps", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got listJSON
	if err := yaml.Unmarshal([]byte(out), &got); err != nil || len(got.Leases) != 6 || got.NodeHeartbeats == nil || got.NodeHeartbeats.Total != 3 {
		t.Fatalf("-o yaml (%v): %d locks, node heartbeats %+v:\n%s", err, len(got.Leases), got.NodeHeartbeats, out)
	}
	names, _, err := runWith(t, fixture(t), "-A", "--locks", "leases,configmaps", "-o", "name")
	want := "lease.coordination.k8s.io/orders\nlease.coordination.k8s.io/released\nlease.coordination.k8s.io/skewed\n" +
		"lease.coordination.k8s.io/node-1\nlease.coordination.k8s.io/node-2\nlease.coordination.k8s.io/node-3\n" +
		"lease.coordination.k8s.io/kube-controller-manager\nlease.coordination.k8s.io/kube-scheduler\nconfigmap/py-lock\n"
	if err != nil || names != want {
		t.Errorf("-o name (%v):\n%s\nwant:\n%s", err, names, want)
	}
}

// columnsFile writes a custom-columns file of text.
func columnsFile(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "columns")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// -o jsonpath and -o go-template run over -o json's document, through cli-runtime's printers;
// -o custom-columns and custom-columns-file print a row per lock of it, as kubectl get's.
func TestListJSONPathAndGoTemplate(t *testing.T) {
	for _, tc := range []struct{ output, want string }{
		{`jsonpath={range .leases[*]}{.name}={.holder}/{.standing}{"\n"}{end}`,
			"orders=orders-7f9c-x2/expired\nreleased=/released\nskewed=payments-1/on_time\n"},
		{`go-template={{.clock}} {{len .leases}}{{range .leases}} {{.name}}{{end}}`, "api-server 3 orders released skewed"},
		{`jsonpath={.leases[?(@.healthy==false)].name}`, "orders released skewed"},
		{`custom-columns=NAME:.name,HOLDER:holder,STATE:{.standing},DURATION:{lease_duration_seconds},AHEAD:.renew_time_ahead_seconds,PROBLEMS:.problems[*]`,
			"NAME       HOLDER           STATE      DURATION   AHEAD    PROBLEMS\n" +
				"orders     orders-7f9c-x2   expired    15         <none>   " + "not held" + "\n" +
				"released   <none>           released   15         <none>   " + "not held" + "\n" +
				"skewed     payments-1       on_time    15         45       " + skewProblem + "\n"},
		{"custom-columns-file=" + columnsFile(t, "NAME   OWNER\n.name  .owner\n"), "NAME       OWNER\norders     Deployment/orders\nreleased   <none>\nskewed     <none>\n"},
	} {
		out, _, err := runWith(t, fixture(t), "-n", "apps", "-o", tc.output)
		if err != nil || out != tc.want {
			t.Errorf("-o %s (%v):\n%q\nwant\n%q", tc.output, err, out, tc.want)
		}
	}
}
