package integration_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// leaseProbe looks at one Lease two ways: through an exporter's /metrics, which is what the
// tests assert on, and through the API server, which is the truth the exporter must match.
// Every failure it reports carries both, so a CI log alone is enough to diagnose it.
type leaseProbe struct {
	exp      *exporterproc.Exporter
	ns, name string
	last     *exporterproc.Scrape // the latest scrape, for failure messages
}

func newProbe(exp *exporterproc.Exporter, ns, name string) *leaseProbe {
	return &leaseProbe{exp: exp, ns: ns, name: name}
}

// leaseMetrics is what one scrape said about one Lease.
type leaseMetrics struct {
	infos  int    // number of lease_info series; exactly 1 while the exporter knows the Lease
	holder string // holder label of lease_info
	class  string
	series int                // series of any metric carrying this Lease's labels
	values map[string]float64 // per-lease metric name -> value, for series present
}

// v returns a per-lease metric's value, NaN when the series is absent (NaN fails every
// comparison, so an absent series never passes for a value).
func (m leaseMetrics) v(metric string) float64 {
	if x, ok := m.values[metric]; ok {
		return x
	}
	return math.NaN()
}

var perLeaseMetrics = []string{
	"lease_held", "lease_transitions_total", "lease_observed_holder_changes_total",
	"lease_duration_seconds", "lease_renew_age_seconds", "lease_renew_timestamp_seconds",
	"lease_acquire_timestamp_seconds", "lease_expiry_timestamp_seconds",
	"lease_observed_renew_timestamp_seconds", "lease_holder_clock_skew_seconds",
	"lease_overdue_observed_renew_timestamp_seconds", "lease_observed_renewals_total",
}

// scrape fetches /metrics once and extracts this Lease's series.
func (p *leaseProbe) scrape() (leaseMetrics, error) {
	s, err := p.exp.Scrape()
	if err != nil {
		return leaseMetrics{}, fmt.Errorf("scrape %s: %w", p.exp.URL(), err)
	}
	p.last = s
	m := leaseMetrics{values: map[string]float64{}}
	match := map[string]string{"namespace": p.ns, "lease": p.name}
	infos := s.Series("lease_info", match)
	m.infos = len(infos)
	if len(infos) > 0 {
		m.holder, m.class = infos[0].Labels["holder"], infos[0].Labels["class"]
	}
	for _, metric := range perLeaseMetrics {
		if x, ok := s.Value(metric, p.ns, p.name); ok {
			m.values[metric] = x
		}
	}
	for name := range s.Families {
		m.series += len(s.Series(name, match))
	}
	return m, nil
}

// api returns the Lease as the API server has it.
func (p *leaseProbe) api() (*coordinationv1.Lease, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return env.Client.CoordinationV1().Leases(p.ns).Get(ctx, p.name, metav1.GetOptions{})
}

// describe renders the latest scrape's lines for this Lease and the API server's Lease.
func (p *leaseProbe) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n--- %s/metrics for %s/%s ---\n", p.exp.URL(), p.ns, p.name)
	lines := "(never scraped successfully)"
	if p.last != nil {
		if lines = p.last.LeaseLines(p.ns, p.name); lines == "" {
			lines = "(no series for this Lease)"
		}
	}
	b.WriteString(lines + "\n")
	fmt.Fprintf(&b, "--- Lease %s/%s from the API server ---\n", p.ns, p.name)
	b.WriteString(leaseYAML(p.api()))
	return b.String()
}

// leaseYAML renders a Lease the way `kubectl get lease -o yaml` does, minus managedFields.
func leaseYAML(l *coordinationv1.Lease, err error) string {
	if err != nil {
		return fmt.Sprintf("(get failed: %v)\n", err)
	}
	l = l.DeepCopy()
	l.ManagedFields = nil
	l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
	out, err := yaml.Marshal(l)
	if err != nil {
		return fmt.Sprintf("(cannot render: %v)\n", err)
	}
	return string(out)
}

// fatalf fails the test with the diagnosis appended.
func (p *leaseProbe) fatalf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Fatalf("%s/%s: %s%s", p.ns, p.name, fmt.Sprintf(format, args...), p.describe())
}

// errorf is fatalf without stopping the test.
func (p *leaseProbe) errorf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Errorf("%s/%s: %s%s", p.ns, p.name, fmt.Sprintf(format, args...), p.describe())
}

// broken marks a condition error that retrying cannot fix (an inconsistency the exporter
// must never show), so until fails at once instead of polling past it.
type broken struct{ error }

func brokenf(format string, args ...any) error { return broken{fmt.Errorf(format, args...)} }

// until scrapes every interval until cond accepts a scrape and returns that scrape. It fails
// the test when timeout passes or cond returns a broken error. Deadlines are generous: the
// machine is shared and the test binary runs under the race detector.
func (p *leaseProbe) until(t *testing.T, timeout, every time.Duration, what string, cond func(leaseMetrics) error) leaseMetrics {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m, err := p.scrape()
		if err == nil {
			if err = cond(m); err == nil {
				return m
			}
		}
		if errors.As(err, new(broken)) {
			p.fatalf(t, "%s: %v", what, err)
		}
		if time.Now().After(deadline) {
			p.fatalf(t, "%s: not within %s; last: %v", what, timeout, err)
		}
		time.Sleep(every)
	}
}

// newNamespace creates a namespace with a server-generated unique name, so tests sharing the
// control plane never see each other's Leases. It is left behind with the control plane:
// deleting it needs the namespace controller, which only runs in one test.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := env.Client.CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace %s-*: %v", prefix, err)
	}
	return ns.Name
}

func holderOf(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func transitionsOf(l *coordinationv1.Lease) float64 {
	if l.Spec.LeaseTransitions == nil {
		return math.NaN()
	}
	return float64(*l.Spec.LeaseTransitions)
}
