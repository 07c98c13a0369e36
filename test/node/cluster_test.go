//go:build release

package node_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/node"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// cluster is the node a test installs on, with what it needs to drive it.
type cluster struct {
	n      *node.Node
	client kubernetes.Interface
	env    []string // KUBECONFIG and helm's private dirs
	root   string   // repository root
}

func newCluster(t *testing.T, n *node.Node) *cluster {
	d := t.TempDir()
	return &cluster{
		n:      n,
		client: kubernetes.NewForConfigOrDie(n.ControlPlane().Config()),
		root:   tools.RepoRoot(t),
		env: []string{
			"KUBECONFIG=" + n.ControlPlane().KubeconfigPath(),
			"HELM_CACHE_HOME=" + filepath.Join(d, "cache"),
			"HELM_CONFIG_HOME=" + filepath.Join(d, "config"),
			"HELM_DATA_HOME=" + filepath.Join(d, "data"),
		},
	}
}

// run runs a command with the cluster's kubeconfig from the repository root.
func (c *cluster) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.root
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (c *cluster) kubectl(t *testing.T, args ...string) string {
	return c.run(t, filepath.Join(c.n.ControlPlane().AssetsDir(), "kubectl"), args...)
}

// readyPods waits until exactly want Pods match selector in ns, all Ready, and returns them.
func (c *cluster) readyPods(t *testing.T, ns, selector string, want int, timeout time.Duration) []corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		pods, err := c.client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		ready := 0
		if err == nil {
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil && podReady(&p) {
					ready++
				}
			}
			if ready == want && len(pods.Items) == want {
				return pods.Items
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pods %s in %s: %d of %d Ready after %s (err %v): %s", selector, ns, ready, want, timeout, err, c.describe(t, ns))
		}
		time.Sleep(time.Second)
	}
}

func (c *cluster) describe(t *testing.T, ns string) string {
	out, _ := exec.Command(filepath.Join(c.n.ControlPlane().AssetsDir(), "kubectl"), "--kubeconfig", c.n.ControlPlane().KubeconfigPath(),
		"-n", ns, "get", "pods,events", "-o", "wide").CombinedOutput()
	return string(out)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// scrapeService fetches /metrics through the Service's ClusterIP, which only kube-proxy's
// rules on this host make reachable. Each scrape is a new connection, so kube-proxy picks a
// backend anew (with keep-alive every scrape would reach the same Pod).
func (c *cluster) scrapeService(ns, name string) (string, error) {
	svc, err := c.client.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return scrapeURL(fmt.Sprintf("http://%s:%d/metrics", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port))
}

// scrapeURL fetches url on a new connection.
func scrapeURL(url string) (string, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("scrape %s: %s: %s", url, resp.Status, body)
	}
	return string(body), nil
}

// waitJudged scrapes the Service until a scrape reports the Lease held. Right after a
// rollout kube-proxy may not have the new endpoints yet, so errors are retried too.
func (c *cluster) waitJudged(t *testing.T, svcNS, svc, leaseNS, lease string) string {
	t.Helper()
	want := fmt.Sprintf(`lease_held{class="leader-election",kind="Lease",lease=%q,namespace=%q} 1`, lease, leaseNS)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		body, err := c.scrapeService(svcNS, svc)
		if err == nil && strings.Contains(body, want) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter never reported %s; last scrape (err %v):\n%s", want, err, grepLines(body, "lease_"))
		}
		time.Sleep(time.Second)
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// processUID is the uid of the Pod's lease-exporter process, read from the host, since
// the image has no shell to exec.
func processUID(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	status, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(exporterPid(t, pod)), "status"))
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "Uid:") {
			return strings.Fields(l)[1]
		}
	}
	t.Fatalf("no Uid in the status of Pod %s's lease-exporter process", pod.Name)
	return ""
}

// exporterPid is the lease-exporter process in the Pod's cgroup, seen from the host.
func exporterPid(t *testing.T, pod *corev1.Pod) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	marker := "pod" + string(pod.UID)
	for _, e := range entries {
		cg, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err != nil || !strings.Contains(string(cg), marker) {
			continue
		}
		if comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm")); strings.TrimSpace(string(comm)) == "lease-exporter" {
			pid, _ := strconv.Atoi(e.Name())
			return pid
		}
	}
	t.Fatalf("no lease-exporter process in Pod %s's cgroup", pod.Name)
	return 0
}
