//go:build release

package node_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/node"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

const (
	releaseNS   = "monitoring"
	electionsNS = "elections"
	selector    = "app.kubernetes.io/name=lease-exporter"
)

// TestInstallOnARealNode installs what users install on one real node, in the order a user
// would, and finally checks that stopping the node left the host as it was. One node serves
// every step: starting it is most of the cost.
func TestInstallOnARealNode(t *testing.T) {
	img := exporterImage(t)
	onNode(t, []string{img.archive, buildElectorImage(t)}, func(n *node.Node) {
		c := newCluster(t, n)
		createNamespace(t, c.client, electionsNS)
		deployElector(t, c.client, electionsNS, "node-elector", 2)

		t.Run("HelmChartWithDefaults", func(t *testing.T) { testHelmChart(t, c, img) })
		t.Run("HelmChartWithEvents", func(t *testing.T) { testHelmChartWithEvents(t, c, img) })
		for _, tree := range []string{"deploy/kustomize/base", "deploy/kustomize/overlays/annotation-locks", "deploy/kustomize/overlays/sharded"} {
			t.Run("Kustomize/"+filepath.Base(tree), func(t *testing.T) { testKustomize(t, c, img, tree) })
		}
		t.Run("FromARegistry", func(t *testing.T) { testFromARegistry(t, c) })
	})
}

// onNode starts a node with images, runs fn on it, dumps its logs if the test failed, stops
// it, and checks that stopping it left the host as it was. One node serves every step of a
// test: starting it is most of the cost.
func onNode(t *testing.T, images []string, fn func(n *node.Node)) {
	t.Helper()
	before, err := node.SnapshotHost()
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Start(context.Background(), node.Options{Images: images})
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = n.Stop()
		}
	}()
	fn(n)
	if t.Failed() {
		dumpLogs(t, n)
	}
	stopped = true
	if err := n.Stop(); err != nil {
		t.Fatalf("stop node: %v", err)
	}
	after, err := node.SnapshotHost()
	if err != nil {
		t.Fatal(err)
	}
	if diff := after.Diff(before); len(diff) > 0 {
		t.Errorf("the host differs after the node stopped:\n%s", strings.Join(diff, "\n"))
	}
}

// testHelmChart: `helm install` with the image set to the local one (pullPolicy Never) and
// every other default; the Pods become Ready through their own probes, run as 65532, judge
// the elector's Lease with in-cluster config and the chart's RBAC only, and a deleted Pod is
// replaced by the Deployment.
func testHelmChart(t *testing.T, c *cluster, img image) {
	c.run(t, tools.Helm(t), "install", "lease-exporter", "deploy/helm/lease-exporter",
		"--namespace", releaseNS, "--create-namespace", "--wait", "--timeout", "4m",
		"--set", "image.repository="+img.repository, "--set", "image.tag="+img.tag,
		"--set", "image.pullPolicy=Never")
	pods := c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	for i := range pods {
		p := &pods[i]
		if uid := processUID(t, p); uid != "65532" {
			t.Errorf("Pod %s runs as uid %s, want 65532", p.Name, uid)
		}
		for _, s := range p.Status.ContainerStatuses {
			if s.RestartCount != 0 {
				t.Errorf("Pod %s container %s restarted %d times", p.Name, s.Name, s.RestartCount)
			}
		}
	}
	body := c.waitJudged(t, releaseNS, "lease-exporter", electionsNS, "node-elector")
	t.Logf("judged through the Service:\n%s", grepLines(body, `lease="node-elector"`))
	kubectlLeaseThroughAPortForward(t, c)

	victim := pods[0].Name
	if err := c.client.CoreV1().Pods(releaseNS).Delete(context.Background(), victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	replaced := c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	for _, p := range replaced {
		if p.Name == victim {
			t.Errorf("deleted Pod %s is still listed as Ready", victim)
		}
	}
	c.waitJudged(t, releaseNS, "lease-exporter", electionsNS, "node-elector")
	c.run(t, tools.Helm(t), "uninstall", "lease-exporter", "--namespace", releaseNS, "--wait")
}

// kubectlLeaseThroughAPortForward: kubectl lease describe --exporter-service reads the
// elector's history from the chart's exporter through a port-forward to a Ready Pod behind
// its Service, with the user's credentials (issue 51), as docs/kubectl-plugin.md tells the
// person on call: the kubelet connects inside the Pod, so the chart's NetworkPolicy does not
// stand in the way.
func kubectlLeaseThroughAPortForward(t *testing.T, c *cluster) {
	t.Helper()
	plugins := t.TempDir()
	c.run(t, filepath.Join(c.root, "hack", "build.sh"), filepath.Join(plugins, "kubectl-lease"), "kubectl-lease")
	path := "PATH=" + plugins + string(os.PathListSeparator) + c.n.ControlPlane().AssetsDir() + string(os.PathListSeparator) + os.Getenv("PATH")
	var out string
	deadline := time.Now().Add(time.Minute)
	for {
		cmd := exec.Command("kubectl", "lease", "describe", electionsNS+"/node-elector", "--exporter-service", releaseNS+"/lease-exporter")
		cmd.Dir, cmd.Env = c.root, append(append(os.Environ(), c.env...), path)
		b, err := cmd.CombinedOutput()
		out = string(b)
		if err == nil && strings.Contains(out, "History (from service "+releaseNS+"/lease-exporter") && strings.Contains(out, "holding") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl lease describe --exporter-service never showed the history (%v):\n%s", err, out)
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("kubectl lease describe through a port-forward:\n%s", out)
}

// testHelmChartWithEvents: `helm install` with events.enabled=true, in real Pods: the kubelet
// expands --events.lock=$(POD_NAMESPACE)/..., exactly one of the two replicas is elected
// writer with the chart's RBAC, the elector's failover becomes a LeaderChanged Event, and
// deleting the writer's Pod hands writing over at once (it releases its election Lease on
// SIGTERM) instead of after the Lease's 15 s.
func testHelmChartWithEvents(t *testing.T, c *cluster, img image) {
	ctx := context.Background()
	c.run(t, tools.Helm(t), "install", "lease-exporter", "deploy/helm/lease-exporter",
		"--namespace", releaseNS, "--create-namespace", "--wait", "--timeout", "4m",
		"--set", "image.repository="+img.repository, "--set", "image.tag="+img.tag,
		"--set", "image.pullPolicy=Never", "--set", "events.enabled=true")
	defer c.run(t, tools.Helm(t), "uninstall", "lease-exporter", "--namespace", releaseNS, "--wait")
	writer := waitOneWriter(t, c, 2*time.Minute)

	failElectorOver(t, c)

	// The writer's Pod is deleted: it releases the election, and the other replica writes.
	deleted := time.Now()
	if err := c.client.CoreV1().Pods(releaseNS).Delete(ctx, writer.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitLease(t, c.client, releaseNS, "lease-exporter-events", time.Minute, func(l *coordinationv1.Lease) bool {
		return l.Spec.HolderIdentity != nil && !strings.HasPrefix(*l.Spec.HolderIdentity, writer.Name+"_")
	})
	if took := time.Since(deleted); took > 12*time.Second {
		t.Errorf("writing moved to another replica %s after the writer's Pod was deleted: released, it takes the 2 s retry period, not the 15 s lease", took.Round(time.Second))
	} else {
		t.Logf("writing moved to another replica %s after the writer's Pod was deleted", took.Round(100*time.Millisecond))
	}
	waitOneWriter(t, c, 2*time.Minute)
}

// failElectorOver deletes the elector's leader Pod, so the other takes the Lease over, waits
// for the exporter's LeaderChanged Event from the old holder, and returns that holder.
func failElectorOver(t *testing.T, c *cluster) string {
	t.Helper()
	ctx := context.Background()
	// The elector's leader Pod is deleted; the other takes the Lease over.
	l := waitLease(t, c.client, electionsNS, "node-elector", time.Minute, func(l *coordinationv1.Lease) bool { return l.Spec.HolderIdentity != nil })
	old := *l.Spec.HolderIdentity
	leaderPod, _, _ := strings.Cut(old, "_")
	if err := c.client.CoreV1().Pods(electionsNS).Delete(ctx, leaderPod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		evs, err := c.client.EventsV1().Events(electionsNS).List(ctx, metav1.ListOptions{FieldSelector: "reportingController=lease-exporter"})
		if err == nil && slices.ContainsFunc(evs.Items, func(ev eventsv1.Event) bool {
			return ev.Reason == "LeaderChanged" && ev.Regarding.Name == "node-elector" && strings.Contains(ev.Note, fmt.Sprintf("from %q", old))
		}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no LeaderChanged Event from %s for %s/node-elector (err %v)", old, electionsNS, err)
		}
		time.Sleep(time.Second)
	}
	return old
}

// waitOneWriter waits until the chart's Pods are Ready and exactly one reports
// lease_exporter_events_writer 1, scraped on its own Pod IP, and returns it.
func waitOneWriter(t *testing.T, c *cluster, timeout time.Duration) corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		pods := c.readyPods(t, releaseNS, selector, 2, timeout)
		var writers []corev1.Pod
		for _, p := range pods {
			body, err := scrapeURL(fmt.Sprintf("http://%s:10047/metrics", p.Status.PodIP))
			if err == nil && strings.Contains(body, "\nlease_exporter_events_writer 1\n") {
				writers = append(writers, p)
			}
		}
		if len(writers) == 1 {
			return writers[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d replicas write Events, want exactly 1", len(writers), len(pods))
		}
		time.Sleep(time.Second)
	}
}
