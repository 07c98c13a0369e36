package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// promSample is one element of an instant vector.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // [unix time, "value"]
}

func (s promSample) value() float64 {
	str, _ := s.Value[1].(string)
	f, _ := strconv.ParseFloat(str, 64)
	return f
}

// promQuery runs an instant query that must return a vector.
func promQuery(expr string) ([]promSample, error) { return env.promQuery(expr) }

// promQuery is the package's promQuery for setup, before env is set.
func (e *environment) promQuery(expr string) ([]promSample, error) {
	raw, err := promstack.Query(e.prom.URL, expr)
	if err != nil {
		return nil, err
	}
	var out []promSample
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("query %q: result is not a vector: %s", expr, raw)
	}
	return out, nil
}

// formatSamples renders a vector one series per line, sorted, for messages.
func formatSamples(ss []promSample) string {
	lines := make([]string, 0, len(ss))
	for _, s := range ss {
		lines = append(lines, fmt.Sprintf("%v = %g", s.Metric, s.value()))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// eventually polls cond every half second (a scrape or two) until it holds, for timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	testsuite.Eventually(t, timeout, 500*time.Millisecond, what, cond)
}

// waitProm waits until expr returns exactly one series whose value satisfies ok.
func waitProm(t *testing.T, timeout time.Duration, expr string, ok func(float64) bool) float64 {
	t.Helper()
	var v float64
	eventually(t, timeout, "Prometheus: "+expr, func() (bool, string) {
		ss, err := promQuery(expr)
		if err != nil || len(ss) != 1 {
			return false, fmt.Sprintf("err=%v result=%s", err, formatSamples(ss))
		}
		v = ss[0].value()
		return ok(v), fmt.Sprintf("value %g", v)
	})
	return v
}

func eq(want float64) func(float64) bool { return func(v float64) bool { return v == want } }

// sel is the selector of one Lease's series.
func sel(metric, ns, lease string) string {
	return fmt.Sprintf(`%s{job=%q,namespace=%q,lease=%q}`, metric, exporterJobName, ns, lease)
}

// scenario is one test's Leases: its namespaces are created at the start and their Leases
// deleted at the end (so their series and alerts end), and if the test failed, everything
// relevant to its Leases is printed.
type scenario struct {
	t          *testing.T
	namespaces []string
	leases     [][2]string // namespace, name: whose exporter series to print on failure
}

func newScenario(t *testing.T, ns string, leases ...string) *scenario {
	t.Helper()
	s := &scenario{t: t}
	// Cleanups run last-registered first: candidates (registered later) stop first, then the
	// diagnostics print while the Leases still exist, then the Leases go.
	t.Cleanup(s.deleteLeases)
	t.Cleanup(s.diagnose)
	s.namespace(ns, leases...)
	return s
}

// namespace adds a namespace of the scenario, creating it if needed.
func (s *scenario) namespace(ns string, leases ...string) {
	s.t.Helper()
	_, err := env.Client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		s.t.Fatalf("create namespace %s: %v", ns, err)
	}
	s.namespaces = append(s.namespaces, ns)
	s.show(ns, leases...)
}

// show adds Leases to print on failure.
func (s *scenario) show(ns string, leases ...string) {
	for _, l := range leases {
		s.leases = append(s.leases, [2]string{ns, l})
	}
}

func (s *scenario) deleteLeases() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ns := range s.namespaces {
		err := env.Client.CoordinationV1().Leases(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		if err != nil {
			s.t.Errorf("delete leases in %s: %v", ns, err)
		}
	}
}

// candidate starts one leader-election candidate, stopped at the end of the test.
func (s *scenario) candidate(ns, lease, id string, tm election.Timings, release bool) *election.Candidate {
	s.t.Helper()
	c, err := election.Start(context.Background(), env.Client, ns, lease, id, tm, release)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(c.Stop)
	return c
}

// pool starts n candidates that stop without releasing, like crashing processes.
func (s *scenario) pool(ns, lease, prefix string, n int) *election.Pool {
	s.t.Helper()
	p, err := election.StartPool(context.Background(), env.Client, ns, lease, prefix, n, election.Fast, false)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(p.StopAll)
	return p
}

// waitLeader waits until a candidate of p other than the one named not leads.
func waitLeader(t *testing.T, p *election.Pool, not string) *election.Candidate {
	t.Helper()
	var l *election.Candidate
	eventually(t, time.Minute, fmt.Sprintf("a leader of %s/%s other than %q", p.Namespace, p.Name, not), func() (bool, string) {
		l = p.Leader()
		return l != nil && l.Identity != not, fmt.Sprintf("leader %v", l)
	})
	return l
}

// failover crashes p's leader (no release) and adds a fresh candidate, keeping the pool's
// size, then waits until another candidate has taken over: one more lease transition.
func (s *scenario) failover(p *election.Pool, fresh string) {
	s.t.Helper()
	old := waitLeader(s.t, p, "")
	p.Remove(old)
	c, err := election.Start(context.Background(), env.Client, p.Namespace, p.Name, fresh, election.Fast, false)
	if err != nil {
		s.t.Fatal(err)
	}
	p.Add(c)
	waitLeader(s.t, p, old.Identity)
}

// diagnose prints, after a failure, what Prometheus alerts on, what the receiver got, what
// the exporter exports for the scenario's Leases, and the tails of the process logs.
func (s *scenario) diagnose() {
	t := s.t
	if !t.Failed() {
		return
	}
	alerts, err := promQuery("ALERTS")
	t.Logf("===== Prometheus ALERTS (err=%v) =====\n%s", err, formatSamples(alerts))
	t.Logf("===== webhook receiver =====\n%s", env.receiver.dump())
	if scrape, err := env.exporter.Scrape(); err != nil {
		t.Logf("===== exporter /metrics: %v", err)
	} else {
		var self []string
		for _, l := range strings.Split(scrape.Text, "\n") {
			if strings.HasPrefix(l, "lease_exporter_") {
				self = append(self, l)
			}
		}
		t.Logf("===== exporter self-metrics =====\n%s", strings.Join(self, "\n"))
		for _, l := range s.leases {
			t.Logf("===== exporter /metrics for %s/%s =====\n%s", l[0], l[1], scrape.LeaseLines(l[0], l[1]))
		}
	}
	t.Logf("===== lease-exporter log =====\n%s", testsuite.Tail(env.exporter.Logs(), 40))
	t.Logf("===== prometheus log =====\n%s", testsuite.Tail(env.prom.Logs(), 25))
	t.Logf("===== alertmanager log =====\n%s", testsuite.Tail(env.am.Logs(), 25))
	for _, p := range env.CP.Processes() {
		if p.Name() == "kube-apiserver" || strings.HasPrefix(p.Name(), "kube-scheduler") {
			t.Logf("===== %s log =====\n%s", p.Name(), testsuite.Tail(p.Logs(), 25))
		}
	}
	t.Logf("===== client-go (candidates) log =====\n%s", testsuite.Tail(readFile(env.klogPath), 30))
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// lockHistory is the part of the status page's lock JSON (GET /api/v1/leases/{ns}/{name},
// docs/status-page.md) the alert tests read.
type lockHistory struct {
	Tenures []struct {
		Holder           string   `json:"holder"`
		Ended            string   `json:"ended"`
		GapBeforeSeconds *float64 `json:"gap_before_seconds"`
	} `json:"tenures"`
}

// leaseHistory reads a Lease's history from the exporter's status API.
func leaseHistory(ns, lease string) (lockHistory, error) {
	resp, err := http.Get(env.exporter.URL() + "/api/v1/leases/" + ns + "/" + lease)
	if err != nil {
		return lockHistory{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return lockHistory{}, fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	var d struct {
		History *lockHistory `json:"history"`
	}
	if err := json.Unmarshal(body, &d); err != nil || d.History == nil {
		return lockHistory{}, fmt.Errorf("no history (%v): %s", err, body)
	}
	return *d.History, nil
}
