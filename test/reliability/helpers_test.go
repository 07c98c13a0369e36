package reliability_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// Slow is a leader-election timing whose lease outlives any API server shutdown and start-up
// gap of these tests, so "the lease expired before the watch broke" never muddies what the
// exporter must show during an outage. Candidates still renew every 2 s.
var Slow = election.Timings{LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: 2 * time.Second}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	if _, err := env.Client.CoreV1().Namespaces().Create(context.Background(), namespaceObject(name), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

func namespaceObject(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// createLease creates a Lease held by holder, renewed now, that expires after duration.
func createLease(t *testing.T, namespace, name, holder string, duration int32) {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration,
			AcquireTime: &now, RenewTime: &now},
	}
	if _, err := env.Client.CoordinationV1().Leases(namespace).Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create lease %s/%s: %v", namespace, name, err)
	}
}

// startPool starts candidates for namespace/name with their own admin client, so they
// reconnect by themselves after an outage, and stops them when the test ends.
func startPool(t *testing.T, namespace, name string, n int, timings election.Timings) *election.Pool {
	t.Helper()
	client, err := kubernetes.NewForConfig(env.CP.Config())
	if err != nil {
		t.Fatal(err)
	}
	p, err := election.StartPool(context.Background(), client, namespace, name, name, n, timings, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.StopAll)
	return p
}

// eventually polls cond every 250 ms until it holds, for timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	testsuite.Eventually(t, timeout, 250*time.Millisecond, what, cond)
}

// scrape fetches /metrics, failing the test on any error.
func scrape(t *testing.T, exp *exporterproc.Exporter) *exporterproc.Scrape {
	t.Helper()
	s, err := exp.Scrape()
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return s
}

// gauge returns the value of an unlabelled metric, or -1 when it is absent.
func gauge(s *exporterproc.Scrape, metric string) float64 {
	ss := s.Series(metric, nil)
	if len(ss) != 1 {
		return -1
	}
	return ss[0].Value
}

// leaseValue returns metric for one lease, or -1 when absent.
func leaseValue(s *exporterproc.Scrape, metric, namespace, lease string) float64 {
	v, ok := s.Value(metric, namespace, lease)
	if !ok {
		return -1
	}
	return v
}

// infoCounts counts lease_info series per lease name in namespace: the test of "no lost or
// duplicated series" is that every expected lease has exactly one.
func infoCounts(s *exporterproc.Scrape, namespace string) map[string]int {
	counts := map[string]int{}
	for _, sm := range s.Series("lease_info", map[string]string{"namespace": namespace}) {
		counts[sm.Labels["lease"]]++
	}
	return counts
}

// checkExactlyOnce reports leases whose lease_info count is not exactly one, and unexpected
// leases.
func checkExactlyOnce(s *exporterproc.Scrape, namespace string, want ...string) error {
	counts := infoCounts(s, namespace)
	var problems []string
	for _, name := range want {
		if counts[name] != 1 {
			problems = append(problems, fmt.Sprintf("%s has %d lease_info series", name, counts[name]))
		}
		delete(counts, name)
	}
	for name, n := range counts {
		problems = append(problems, fmt.Sprintf("unexpected lease %s (%d series)", name, n))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// health summarises the exporter's self-metrics for failure messages.
func health(s *exporterproc.Scrape) string {
	return fmt.Sprintf("watch_up=%v stale=%.1fs synced=%v", gauge(s, "lease_exporter_watch_up"),
		gauge(s, "lease_exporter_watch_stale_seconds"), gauge(s, "lease_exporter_cache_synced"))
}

// etcdDelete deletes a Lease straight from etcd, through etcd's v3 JSON gateway, while the API
// server is down: the only way to change the cluster while no watch can see it. The key layout
// is the API server's default (/registry/<resource>/<namespace>/<name>).
func etcdDelete(namespace, name string) error {
	key := base64.StdEncoding.EncodeToString([]byte("/registry/leases/" + namespace + "/" + name))
	body, _ := json.Marshal(map[string]string{"key": key})
	resp, err := http.Post(env.CP.EtcdURL()+"/v3/kv/deleterange", "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("etcd deleterange: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		Deleted string `json:"deleted"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("decode etcd deleterange response (%s): %w", resp.Status, err)
	}
	if out.Deleted != "1" {
		return fmt.Errorf("etcd deleted %q keys for %s/%s, want 1", out.Deleted, namespace, name)
	}
	return nil
}

// logLines counts the exporter's JSON log lines at level that contain substr.
func logLines(logs, level, substr string) []string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		var rec struct {
			Level string `json:"level"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Level != level {
			continue
		}
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}
