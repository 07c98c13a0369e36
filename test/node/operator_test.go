//go:build release

package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/promoperator"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// kpsRelease is kube-prometheus-stack's release name; its Prometheus selects the chart's
// ServiceMonitor and PrometheusRule by release=<it> (docs/deploy.md).
const kpsRelease = "kube-prometheus-stack"

// testKubePrometheusStack: the release from the registry, wired into kube-prometheus-stack
// as docs/deploy.md wires it (the chart's ServiceMonitor and PrometheusRule), with Events and
// the chart's two replicas and PodDisruptionBudget. The Prometheus Operator reconciles both;
// Prometheus (run from the operator's configuration) scrapes the Pods on the node and sends to
// a real Alertmanager, whose webhook records every notification. It starts on the
// pre-release, which records a failover in Events, and then, in order: the upgrade to X.Y.Z;
// LeaseNoLeader (the shipped rule, `for: 2m`) paging with the labels its runbook names when
// the elector is scaled to 0; the exporter's own page, LeaseExporterNoFreshReplica, silent
// through a rollout and loud through a drain of stale replicas (nofresh_test.go); and what
// `helm uninstall` leaves.
func testKubePrometheusStack(t *testing.T, c *cluster, reg, repo string) {
	// The build first: the test's own bound starts once it is done.
	opDir := promoperator.BuildForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	hook := startWebhook(t)
	am, err := promstack.StartAlertmanager(ctx, t.TempDir(), promstack.AlertmanagerOptions{WebhookURL: hook.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(am.Stop)
	stack := promoperator.StartForTest(t, c.n.ControlPlane(), promoperator.Options{
		Release: kpsRelease, AlertmanagerURL: am.URL, EvaluationInterval: "10s", OperatorDir: opDir})

	pushPreRelease(t, reg, repo)
	values := []string{"oci://" + reg + "/charts/lease-exporter", "--plain-http",
		"--namespace", releaseNS, "--wait", "--timeout", "4m",
		"--set", "image.repository=" + repo, "--set", "events.enabled=true",
		"--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.additionalLabels.release=" + kpsRelease,
		"--set", "serviceMonitor.interval=10s",
		"--set", "prometheusRule.enabled=true", "--set", "prometheusRule.additionalLabels.release=" + kpsRelease}
	c.run(t, tools.Helm(t), append([]string{"install", "lease-exporter", "--version", preReleaseVersion, "--create-namespace"}, values...)...)
	installed := true
	defer func() {
		if installed {
			c.run(t, tools.Helm(t), "uninstall", "lease-exporter", "--namespace", releaseNS, "--wait")
		}
	}()
	c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	pool := promoperator.ServiceMonitorJob(releaseNS, "lease-exporter", 0)
	target, err := stack.WaitTargetUp(ctx, pool, 4*time.Minute)
	if err != nil {
		t.Fatalf("target of %s never up: %v", pool, err)
	}
	t.Logf("Prometheus scrapes %+v", target)
	if _, err := stack.WaitRules(ctx, 2*time.Minute, "LeaseNoLeader"); err != nil {
		t.Fatal(err)
	}
	c.waitJudged(t, releaseNS, "lease-exporter", electionsNS, "node-elector")
	waitOneWriter(t, c, 2*time.Minute)
	old := failElectorOver(t, c)

	t.Run("UpgradeFromThePreRelease", func(t *testing.T) {
		// minReadySeconds above the 10 s scrape interval: each new replica is scraped before the
		// one it replaces goes (the pre-release's chart has no such value).
		upgrade := append([]string{"upgrade", "lease-exporter", "--version", registryVersion, "--set", "minReadySeconds=15"}, values...)
		testUpgradeFromThePreRelease(t, c, stack, hook, upgrade, repo, old)
	})
	t.Run("LeaseNoLeaderPages", func(t *testing.T) { testLeaseNoLeaderPages(t, c, am.URL) })
	t.Run("RolloutSendsNoExporterAlert", func(t *testing.T) { testRolloutSendsNoExporterAlert(t, c, stack, hook) })
	t.Run("DrainWhileStalePages", func(t *testing.T) { testDrainWhileStalePages(t, c, stack, hook) })
	installed = false
	t.Run("UninstallLeavesTheElectionLease", func(t *testing.T) { testUninstallLeavesTheElectionLease(t, c) })
}

// testUpgradeFromThePreRelease: `helm upgrade` from the pre-release to X.Y.Z, both from the
// registry, rolls the two replicas (maxSurge 1, maxUnavailable 0) while Prometheus scrapes
// them every 10 s and evaluates every 10 s. At every second of the upgrade, and of the 80 s
// after it and after X.Y.Z's rules are loaded (a gap would page one `for`, 1m, plus an
// evaluation later), at least one replica's latest scrape answered; no alert of any name fires
// and none is notified. The new replicas show the pre-release's failover, rebuilt from its
// Events.
func testUpgradeFromThePreRelease(t *testing.T, c *cluster, stack *promoperator.Stack, hook *webhook, upgrade []string, repo, old string) {
	waitNoAlerts(t, stack, `ALERTS`, 3*time.Minute)
	start := time.Now()
	c.run(t, tools.Helm(t), upgrade...)
	pods := c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	rolled := time.Since(start)
	for _, p := range pods {
		for _, s := range p.Status.ContainerStatuses {
			if s.Image != repo+":v"+registryVersion {
				t.Errorf("after the upgrade Pod %s runs %s, want %s:v%s", p.Name, s.Image, repo, registryVersion)
			}
		}
	}
	// The rules of X.Y.Z (LeaseExporterNoFreshReplica is new since the pre-release).
	if _, err := stack.WaitRules(context.Background(), 2*time.Minute, noFresh); err != nil {
		t.Fatal(err)
	}
	loaded := time.Since(start)
	time.Sleep(80 * time.Second)
	window := fmt.Sprintf("%ds", int(time.Since(start).Seconds())+1)

	// `or vector(0)`: a second with no target at all counts as none answering.
	answered := querySamples(t, stack, `min_over_time((sum(up{job="lease-exporter"}) or vector(0))[`+window+`:1s])`)
	if len(answered) != 1 || answered[0].value(t) < 1 {
		t.Errorf("at some second of the upgrade no replica's latest scrape answered: min over the window of sum(up) = %v", answered)
	}
	scrapes := querySamples(t, stack, `sum(count_over_time(up{job="lease-exporter"}[`+window+`]))`)
	failed := querySamples(t, stack, `sum(count_over_time(up{job="lease-exporter"}[`+window+`])) - sum(sum_over_time(up{job="lease-exporter"}[`+window+`]))`)
	var versions []string
	for _, v := range querySamples(t, stack, `count by (version) (count_over_time(lease_exporter_build_info{job="lease-exporter"}[`+window+`]))`) {
		versions = append(versions, fmt.Sprintf("%s by %v replicas", v.Metric["version"], v.value(t)))
	}
	if s := querySamples(t, stack, `max_over_time(ALERTS{alertstate="firing"}[`+window+`])`); len(s) > 0 {
		t.Errorf("alerts fired during the upgrade: %v", s)
	}
	if n := hook.since(start, "", ""); len(n) > 0 {
		t.Errorf("the upgrade sent notifications: %+v", n)
	}
	t.Logf("helm upgrade %s → %s: Pods rolled in %s, X.Y.Z's rules loaded after %s; in the %s window Prometheus made %v scrapes, %v failed, always one answering (versions answering: %s); no alert fired or was notified",
		preReleaseVersion, registryVersion, rolled.Round(time.Second), loaded.Round(time.Second), window, sampleValues(t, scrapes), sampleValues(t, failed), strings.Join(versions, ", "))
	for _, p := range pods {
		waitRebuiltTenure(t, p.Status.PodIP, old)
	}
}

// testLeaseNoLeaderPages: the elector's Deployment scaled to 0 reaches Alertmanager as
// LeaseNoLeader with the labels and annotations its runbook names; then it is scaled back to 2.
func testLeaseNoLeaderPages(t *testing.T, c *cluster, amURL string) {
	c.waitJudged(t, releaseNS, "lease-exporter", electionsNS, "node-elector")
	scaleElector(t, c, 0)
	defer scaleElector(t, c, 2)
	alert := waitAlert(t, amURL, "LeaseNoLeader", electionsNS, "node-elector", 6*time.Minute)
	for k, want := range map[string]string{"severity": "critical", "class": "leader-election", "kind": "Lease"} {
		if alert.Labels[k] != want {
			t.Errorf("LeaseNoLeader label %s = %q, want %q (labels %v)", k, alert.Labels[k], want, alert.Labels)
		}
	}
	if alert.Annotations["runbook_url"] == "" || alert.Annotations["summary"] == "" {
		t.Errorf("LeaseNoLeader lacks its runbook_url or summary: %v", alert.Annotations)
	}
}

// testUninstallLeavesTheElectionLease: `helm uninstall` leaves only what docs/deploy.md says
// remains, the Events writer's election Lease, and docs/deploy.md's command removes it.
func testUninstallLeavesTheElectionLease(t *testing.T, c *cluster) {
	c.run(t, tools.Helm(t), "uninstall", "lease-exporter", "--namespace", releaseNS, "--wait")
	// helm waits for the Deployment it deleted; its Pods go after, by garbage collection.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		pods, err := c.client.CoreV1().Pods(releaseNS).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err == nil && len(pods.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chart's Pods are still there 2 minutes after helm uninstall (err %v)", err)
		}
	}
	// The Prometheus Operator's stack shares the namespace: what the chart made carries its
	// instance label, and what the exporter made at run time is its election Lease.
	left := strings.TrimSpace(c.kubectl(t, "get", "all,configmaps,secrets,serviceaccounts,roles,rolebindings,poddisruptionbudgets,networkpolicies,servicemonitors,prometheusrules",
		"-n", releaseNS, "-l", "app.kubernetes.io/instance=lease-exporter", "-o", "name"))
	if left != "" {
		t.Errorf("after helm uninstall %s still holds the chart's %s", releaseNS, strings.Fields(left))
	}
	if leases := strings.TrimSpace(c.kubectl(t, "get", "leases", "-n", releaseNS, "-o", "name")); leases != "lease.coordination.k8s.io/lease-exporter-events" {
		t.Errorf("after helm uninstall the Leases of %s are %q, want only the election Lease docs/deploy.md names", releaseNS, leases)
	}
	cluster := strings.TrimSpace(c.kubectl(t, "get", "clusterroles,clusterrolebindings", "-l", "app.kubernetes.io/instance=lease-exporter", "-o", "name"))
	if cluster != "" {
		t.Errorf("after helm uninstall the cluster still holds %s", cluster)
	}
	// docs/deploy.md's command for what remains.
	c.kubectl(t, "delete", "lease", "-n", releaseNS, "lease-exporter-events")
}

// waitNoAlerts waits until Prometheus has no sample of expr (ALERTS, or a selection of it),
// pending or firing, so that whatever comes after is the test's doing.
func waitNoAlerts(t *testing.T, stack *promoperator.Stack, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for len(querySamples(t, stack, expr)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("alerts still active after %s, before the test's change: %v", timeout, querySamples(t, stack, expr))
		}
		time.Sleep(time.Second)
	}
	time.Sleep(3 * time.Second) // Alertmanager's group_wait and group_interval are 1s
}

// sampleValues is each sample's value, for a log line.
func sampleValues(t *testing.T, s []promSample) []float64 {
	t.Helper()
	var out []float64
	for _, x := range s {
		out = append(out, x.value(t))
	}
	return out
}

func scaleElector(t *testing.T, c *cluster, replicas int32) {
	t.Helper()
	s, err := c.client.AppsV1().Deployments(electionsNS).GetScale(context.Background(), "elector-node-elector", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Replicas = replicas
	if _, err := c.client.AppsV1().Deployments(electionsNS).UpdateScale(context.Background(), "elector-node-elector", s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// waitAlert polls Alertmanager's API until the alert for namespace/lease is there.
func waitAlert(t *testing.T, amURL, name, ns, lease string, timeout time.Duration) amAlert {
	t.Helper()
	q := url.Values{"filter": {fmt.Sprintf("alertname=%q", name), fmt.Sprintf("namespace=%q", ns), fmt.Sprintf("lease=%q", lease)}}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(amURL + "/api/v2/alerts?" + q.Encode())
		if err == nil {
			var alerts []amAlert
			err = json.NewDecoder(resp.Body).Decode(&alerts)
			resp.Body.Close()
			if err == nil && len(alerts) > 0 {
				return alerts[0]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s for %s/%s never reached Alertmanager within %s (last err %v)", name, ns, lease, timeout, err)
		}
		time.Sleep(5 * time.Second)
	}
}
