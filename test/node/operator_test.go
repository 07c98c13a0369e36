//go:build release

package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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

// testKubePrometheusStack: the chart with its ServiceMonitor and PrometheusRule, as
// docs/deploy.md wires it into kube-prometheus-stack. The Prometheus Operator reconciles
// both; Prometheus (run from the operator's configuration) discovers the Pods through the
// Service's endpoints and scrapes them on the node (up == 1); the elector's Deployment is
// scaled to 0, and LeaseNoLeader (the shipped rule, `for: 2m`) reaches Alertmanager with the
// labels its runbook names. Then the exporter's own page, LeaseExporterNoFreshReplica:
// silent through a rollout, loud through a drain of stale replicas (nofresh_test.go).
func testKubePrometheusStack(t *testing.T, c *cluster, img image) {
	// The build first: the test's own bound starts once it is done.
	opDir := promoperator.BuildForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	hook := startWebhook(t)
	am, err := promstack.StartAlertmanager(ctx, t.TempDir(), promstack.AlertmanagerOptions{WebhookURL: hook.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(am.Stop)
	stack := promoperator.StartForTest(t, c.n.ControlPlane(), promoperator.Options{
		Release: kpsRelease, AlertmanagerURL: am.URL, EvaluationInterval: "10s", OperatorDir: opDir})
	c.run(t, tools.Helm(t), "install", "lease-exporter", "deploy/helm/lease-exporter",
		"--namespace", releaseNS, "--create-namespace", "--wait", "--timeout", "4m",
		"--set", "image.repository="+img.repository, "--set", "image.tag="+img.tag,
		"--set", "image.pullPolicy=Never",
		"--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.additionalLabels.release="+kpsRelease,
		"--set", "serviceMonitor.interval=10s",
		"--set", "prometheusRule.enabled=true", "--set", "prometheusRule.additionalLabels.release="+kpsRelease)
	defer c.run(t, tools.Helm(t), "uninstall", "lease-exporter", "--namespace", releaseNS, "--wait")
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

	scaleElector(t, c, 0)
	defer scaleElector(t, c, 2)
	alert := waitAlert(t, am.URL, "LeaseNoLeader", electionsNS, "node-elector", 6*time.Minute)
	for k, want := range map[string]string{"severity": "critical", "class": "leader-election", "kind": "Lease"} {
		if alert.Labels[k] != want {
			t.Errorf("LeaseNoLeader label %s = %q, want %q (labels %v)", k, alert.Labels[k], want, alert.Labels)
		}
	}
	if alert.Annotations["runbook_url"] == "" || alert.Annotations["summary"] == "" {
		t.Errorf("LeaseNoLeader lacks its runbook_url or summary: %v", alert.Annotations)
	}
	scaleElector(t, c, 2)

	t.Run("RolloutSendsNoExporterAlert", func(t *testing.T) { testRolloutSendsNoExporterAlert(t, c, stack, hook) })
	t.Run("DrainWhileStalePages", func(t *testing.T) { testDrainWhileStalePages(t, c, stack, hook) })
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
