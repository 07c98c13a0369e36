//go:build release

package node_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	before, err := node.SnapshotHost()
	if err != nil {
		t.Fatal(err)
	}
	img := exporterImage(t)
	n, err := node.Start(context.Background(), node.Options{Images: []string{img.archive, buildElectorImage(t)}})
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = n.Stop()
		}
	}()
	c := newCluster(t, n)
	createNamespace(t, c.client, electionsNS)
	deployElector(t, c.client, electionsNS, "node-elector", 2)

	t.Run("HelmChartWithDefaults", func(t *testing.T) { testHelmChart(t, c, img) })
	for _, tree := range []string{"deploy/kustomize/base", "deploy/kustomize/overlays/annotation-locks", "deploy/kustomize/overlays/sharded"} {
		t.Run("Kustomize/"+filepath.Base(tree), func(t *testing.T) { testKustomize(t, c, img, tree) })
	}
	t.Run("KubePrometheusStack", func(t *testing.T) { testKubePrometheusStack(t, c, img) })

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
	kubectlLeaseThroughTheServiceProxy(t, c)

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

// kubectlLeaseThroughTheServiceProxy: kubectl lease describe reads the elector's history from
// the chart's exporter through the API server's service proxy, with the user's credentials
// and no port-forward (issue 37), as docs/kubectl-plugin.md tells the person on call.
func kubectlLeaseThroughTheServiceProxy(t *testing.T, c *cluster) {
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
	t.Logf("kubectl lease describe through the service proxy:\n%s", out)
}
