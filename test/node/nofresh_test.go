//go:build release

package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/promoperator"
)

// Issue 48: the exporter's own alerts stay loud while it is away. The chart's
// PodDisruptionBudget lets a drain evict not-Ready replicas (unhealthyPodEvictionPolicy
// AlwaysAllow), so LeaseExporterNoFreshReplica must page whether the replicas are stale and
// still scraped or gone, and must not page for a rollout.

const noFresh = "LeaseExporterNoFreshReplica"

// testRolloutSendsNoExporterAlert: `kubectl rollout restart` of the chart's two replicas
// (maxSurge 1, maxUnavailable 0) sends no notification of any exporter alert, nor lets
// LeaseExporterNoFreshReplica fire in Prometheus, though its Pods are all replaced.
func testRolloutSendsNoExporterAlert(t *testing.T, c *cluster, stack *promoperator.Stack, hook *webhook) {
	before := c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	// Nothing of the exporter's pending or firing before, so that any notification after
	// start is the rollout's.
	waitNoAlerts(t, stack, `ALERTS{alertname=~"LeaseExporter.*"}`, 3*time.Minute)
	start := time.Now()
	c.kubectl(t, "-n", releaseNS, "rollout", "restart", "deployment/lease-exporter")
	c.kubectl(t, "-n", releaseNS, "rollout", "status", "deployment/lease-exporter", "--timeout=3m")
	after := c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	for _, a := range after {
		for _, b := range before {
			if a.Name == b.Name {
				t.Fatalf("Pod %s survived the rollout restart", a.Name)
			}
		}
	}
	rolled := time.Since(start)
	// Whatever gap the rollout left would page one `for` (1m) plus an evaluation (10s) later.
	time.Sleep(80 * time.Second)
	window := int(time.Since(start).Seconds()) + 1
	if s := querySamples(t, stack, fmt.Sprintf(`max_over_time(ALERTS{alertname=%q, alertstate="firing"}[%ds])`, noFresh, window)); len(s) > 0 {
		t.Errorf("%s fired during a rollout: %v", noFresh, s)
	}
	if n := hook.since(start, "LeaseExporter", ""); len(n) > 0 {
		t.Errorf("a rollout sent exporter alert notifications: %+v", n)
	}
	pending := querySamples(t, stack, fmt.Sprintf(`max_over_time(ALERTS{alertname=%q}[%ds])`, noFresh, window))
	t.Logf("rollout restart of 2 replicas took %s; no exporter alert notified (%s pending at some evaluation: %v)", rolled.Round(time.Second), noFresh, len(pending) > 0)
}

// testDrainWhileStalePages: both replicas lose the API server (silent network in each Pod's
// netns), go not Ready, and are still scraped through the ServiceMonitor (up 1, staleness
// rising); LeaseExporterNoFreshReplica reaches Alertmanager. `kubectl drain` then evicts both
// (the PodDisruptionBudget allows it: they are unhealthy), their targets vanish, and
// LeaseExporterWatchStale resolves while LeaseExporterNoFreshReplica stays firing, with no
// resolved notification, until the node is uncordoned and a replica is current again.
func testDrainWhileStalePages(t *testing.T, c *cluster, stack *promoperator.Stack, hook *webhook) {
	pods := c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	nodes, err := c.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 1 {
		t.Fatalf("want one node: %v (%v)", nodes, err)
	}
	node := nodes.Items[0].Name
	start := time.Now()
	for _, p := range pods {
		defer silenceAPIServer(t, c, p)()
	}

	// (a) Not Ready, and still scraped through the ServiceMonitor.
	deadline := time.Now().Add(2 * time.Minute)
	for podIsReady(t, c, pods[0].Name) || podIsReady(t, c, pods[1].Name) {
		if time.Now().After(deadline) {
			t.Fatalf("both replicas' view is stale, yet a Pod is still Ready after 2 minutes: %s", c.describe(t, releaseNS))
		}
		time.Sleep(time.Second)
	}
	notReady := time.Since(start)
	waitNotReadyTargetsScraped(t, stack, pods)
	first := staleSeconds(t, stack)
	time.Sleep(25 * time.Second)
	second := staleSeconds(t, stack)
	for inst, v := range first {
		if second[inst] <= v {
			t.Errorf("lease_exporter_watch_stale_seconds of %s went from %v to %v: not scraped while not Ready", inst, v, second[inst])
		}
	}
	t.Logf("both replicas not Ready %s into the silence, still scraped (up 1), watch_stale_seconds %v then %v", notReady.Round(time.Second), first, second)

	// (b) The page reaches Alertmanager.
	paged := hook.wait(t, start, noFresh, "firing", 4*time.Minute)
	for k, want := range map[string]string{"severity": "critical", "job": "lease-exporter", "namespace": releaseNS} {
		if paged.Labels[k] != want {
			t.Errorf("%s label %s = %q, want %q (labels %v)", noFresh, k, paged.Labels[k], want, paged.Labels)
		}
	}
	t.Logf("%s notified %s after the network went silent (Pods not Ready after %s)", noFresh, paged.At.Sub(start).Round(time.Second), notReady.Round(time.Second))
	hook.wait(t, start, "LeaseExporterWatchStale", "firing", 4*time.Minute)

	// (c) Drain: both are evicted, their targets vanish, and the page holds.
	defer c.kubectl(t, "uncordon", node)
	drainStart := time.Now()
	c.kubectl(t, "drain", node, "--pod-selector="+selector, "--delete-emptydir-data", "--ignore-daemonsets", "--timeout=2m")
	drained := time.Since(drainStart)
	gone := waitNoTargets(t, stack, 2*time.Minute)
	resolved := hook.wait(t, drainStart, "LeaseExporterWatchStale", "resolved", 2*time.Minute)
	hold := time.Now().Add(80 * time.Second)
	for time.Now().Before(hold) {
		if s := querySamples(t, stack, fmt.Sprintf(`ALERTS{alertname=%q, alertstate="firing"}`, noFresh)); len(s) != 1 {
			t.Errorf("%s not firing %s after the targets vanished: %v", noFresh, time.Since(gone).Round(time.Second), s)
			break
		}
		time.Sleep(5 * time.Second)
	}
	if n := hook.since(start, noFresh, "resolved"); len(n) > 0 {
		t.Errorf("%s was resolved while no replica was current: %+v", noFresh, n)
	}
	t.Logf("drain evicted both stale replicas in %s; LeaseExporterWatchStale resolved %s after the targets vanished, %s still firing %s after",
		drained.Round(time.Second), resolved.At.Sub(gone).Round(time.Second), noFresh, time.Since(gone).Round(time.Second))

	// Back: uncordoned, the replacements are Ready and current, and the page resolves.
	back := time.Now()
	c.kubectl(t, "uncordon", node)
	c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	hook.wait(t, back, noFresh, "resolved", 3*time.Minute)
	t.Logf("uncordoned: %s resolved %s later", noFresh, time.Since(back).Round(time.Second))
}

// silenceAPIServer drops every packet between the Pod and the API server's Service, in the
// Pod's netns (as silentNetwork does), and returns what lifts the rules; a Pod since deleted
// took its netns and the rules with it.
func silenceAPIServer(t *testing.T, c *cluster, pod corev1.Pod) func() {
	t.Helper()
	svc, err := c.client.CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	netns := "/proc/" + strconv.Itoa(exporterPid(t, &pod)) + "/ns/net"
	rules := filepath.Join(t.TempDir(), "silent.nft")
	if err := os.WriteFile(rules, []byte(fmt.Sprintf(`table inet lease_exporter_silent {
	chain out { type filter hook output priority 0; ip daddr %[1]s tcp dport %[2]d drop; }
	chain in { type filter hook input priority 0; ip saddr %[1]s tcp sport %[2]d drop; }
}
`, svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := nftIn(netns, "-f", rules); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := c.client.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{}); err != nil {
			return // deleted: its netns is gone
		}
		if err := nftIn(netns, "delete", "table", "inet", "lease_exporter_silent"); err != nil {
			t.Error(err)
		}
	}
}

// waitNotReadyTargetsScraped waits until the not-Ready pods are targets of the chart's
// ServiceMonitor, scraped successfully, and discovered as not ready where Prometheus reports
// the endpoint's readiness among the discovered labels.
func waitNotReadyTargetsScraped(t *testing.T, stack *promoperator.Stack, pods []corev1.Pod) {
	t.Helper()
	pool := promoperator.ServiceMonitorJob(releaseNS, "lease-exporter", 0)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ts, err := stack.Targets(context.Background())
		n := 0
		for _, tg := range ts {
			ready := tg.DiscoveredLabels["__meta_kubernetes_endpoint_ready"] + tg.DiscoveredLabels["__meta_kubernetes_endpointslice_endpoint_conditions_ready"]
			for _, p := range pods {
				if tg.ScrapePool == pool && tg.Labels["pod"] == p.Name && tg.Health == "up" && (ready == "false" || ready == "") {
					n++
				}
			}
		}
		if n == len(pods) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d not-Ready Pods are up targets of %s discovered not ready (err %v): %+v", n, len(pods), pool, err, ts)
		}
		time.Sleep(time.Second)
	}
}

// staleSeconds is lease_exporter_watch_stale_seconds by instance, as Prometheus has it;
// it also checks each of those targets is up.
func staleSeconds(t *testing.T, stack *promoperator.Stack) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, s := range querySamples(t, stack, `lease_exporter_watch_stale_seconds{job="lease-exporter"} and on (instance) up{job="lease-exporter"} == 1`) {
		out[s.Metric["instance"]] = s.value(t)
	}
	if len(out) != 2 {
		t.Fatalf("lease_exporter_watch_stale_seconds of up targets: %v, want 2 replicas", out)
	}
	return out
}

// waitNoTargets waits until Prometheus has no target of the chart's ServiceMonitor and
// returns when it saw that.
func waitNoTargets(t *testing.T, stack *promoperator.Stack, timeout time.Duration) time.Time {
	t.Helper()
	pool := promoperator.ServiceMonitorJob(releaseNS, "lease-exporter", 0)
	deadline := time.Now().Add(timeout)
	for {
		ts, err := stack.Targets(context.Background())
		n := 0
		for _, tg := range ts {
			if tg.ScrapePool == pool {
				n++
			}
		}
		if err == nil && n == 0 {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("targets of %s still there %s after the drain (err %v): %+v", pool, timeout, err, ts)
		}
		time.Sleep(time.Second)
	}
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s promSample) value(t *testing.T) float64 {
	t.Helper()
	str, _ := s.Value[1].(string)
	v, err := strconv.ParseFloat(str, 64)
	if err != nil {
		t.Fatalf("sample %v: %v", s, err)
	}
	return v
}

func querySamples(t *testing.T, stack *promoperator.Stack, expr string) []promSample {
	t.Helper()
	raw, err := stack.Query(expr)
	if err != nil {
		t.Fatal(err)
	}
	var out []promSample
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("query %s: %v: %s", expr, err, raw)
	}
	return out
}

// webhook records every alert of every notification Alertmanager sends it.
type webhook struct {
	URL string
	mu  sync.Mutex
	got []notified
}

type notified struct {
	At     time.Time
	Status string // of the alert: firing or resolved
	Labels map[string]string
}

func startWebhook(t *testing.T) *webhook {
	t.Helper()
	h := &webhook{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			Alerts []struct {
				Status string            `json:"status"`
				Labels map[string]string `json:"labels"`
			} `json:"alerts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, a := range msg.Alerts {
			h.got = append(h.got, notified{At: time.Now(), Status: a.Status, Labels: a.Labels})
		}
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

// since returns the alerts notified after t0 whose name starts with prefix and whose
// status is status ("" for any).
func (h *webhook) since(t0 time.Time, prefix, status string) []notified {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []notified
	for _, n := range h.got {
		if n.At.After(t0) && strings.HasPrefix(n.Labels["alertname"], prefix) && (status == "" || n.Status == status) {
			out = append(out, n)
		}
	}
	return out
}

// wait returns the first notification of alert name with status after t0.
func (h *webhook) wait(t *testing.T, t0 time.Time, name, status string, timeout time.Duration) notified {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, n := range h.since(t0, name, status) {
			if n.Labels["alertname"] == name {
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s notification of %s within %s", status, name, timeout)
		}
		time.Sleep(time.Second)
	}
}
