//go:build release

package node_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/node"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// Issue 39: reliability where the exporter runs, in its Pod, installed by the chart.

const (
	faultsNS = "faults"
	// keepaliveBound is how long a watch may take to notice a silent API server:
	// docs/reliability.md's "about 30 s" (15 s idle, then 3 probes 5 s apart), plus the
	// scrape and the watch batch.
	keepaliveBound = 40 * time.Second
	// mutantImage is the exporter built with its watch keepalives off (informer.watchKeepAlive).
	mutantImage = "localhost/lease-exporter-test/no-keepalive:v1"
)

// TestExporterPodThroughFaults installs the chart with one replica (two would let a healthy
// replica hide the other's false page) on a real node, beside a client-go elector whose
// Lease the exporter judges, with Debian's Prometheus scraping the Pod and evaluating the
// shipped alerts, and puts the Pod through faults. Each subtest says what an operator would
// check, and how long detection and recovery took.
func TestExporterPodThroughFaults(t *testing.T) {
	img := exporterImage(t)
	mutant, err := node.BuildGoImageX(t.TempDir(), "github.com/lease-exporter/lease-exporter/cmd/lease-exporter", mutantImage,
		[]string{"github.com/lease-exporter/lease-exporter/informer.watchKeepAlive=off"})
	if err != nil {
		t.Fatal(err)
	}
	onNode(t, []string{img.archive, buildElectorImage(t), mutant}, func(n *node.Node) {
		c := newCluster(t, n)
		createNamespace(t, c.client, faultsNS)
		deployElector(t, c.client, faultsNS, "faults-elector", 2)
		c.run(t, tools.Helm(t), "install", "lease-exporter", "deploy/helm/lease-exporter",
			"--namespace", releaseNS, "--create-namespace", "--wait", "--timeout", "4m",
			"--set", "image.repository="+img.repository, "--set", "image.tag="+img.tag,
			"--set", "image.pullPolicy=Never", "--set", "replicaCount=1")
		pod := c.readyPods(t, releaseNS, selector, 1, 3*time.Minute)[0]
		prom := startPodPrometheus(t, pod.Status.PodIP)
		defer prom.Stop()

		t.Run("SilentNetwork", func(t *testing.T) {
			r := silentNetwork(t, c, pod, 90*time.Second, true)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.detect > keepaliveBound {
				t.Errorf("the watch was seen stale %s after the network went silent, want within %s (docs/reliability.md)", r.detect.Round(time.Second), keepaliveBound)
			}
			t.Logf("silent network for 90 s: stale after %s, current again %s after the network came back", r.detect.Round(100*time.Millisecond), r.recover.Round(100*time.Millisecond))
			checkNoFalsePage(t, prom, 15*time.Minute)
			checkPodUnbroken(t, c, pod)
		})

		// The same check, against a build whose watches carry no keepalives: it must fail.
		t.Run("SilentNetworkCatchesAWatchWithoutKeepalives", func(t *testing.T) {
			i := strings.LastIndex(mutantImage, ":")
			repo, tag := mutantImage[:i], mutantImage[i+1:]
			c.run(t, tools.Helm(t), "upgrade", "lease-exporter", "deploy/helm/lease-exporter",
				"--namespace", releaseNS, "--wait", "--timeout", "4m", "--reuse-values",
				"--set", "image.repository="+repo, "--set", "image.tag="+tag)
			mpod := waitRolled(t, c, pod.Name)
			r := silentNetwork(t, c, mpod, time.Minute, false)
			if r.err == nil && r.detect <= keepaliveBound {
				t.Fatalf("the exporter without watch keepalives was seen stale %s into the silence: the check cannot tell it from the real one", r.detect)
			}
			t.Logf("without keepalives, caught: %v", r.err)
		})
		c.run(t, tools.Helm(t), "uninstall", "lease-exporter", "--namespace", releaseNS, "--wait")
	})
}

// faultResult is what a fault took: how long until the exporter said its view was stale,
// and how long after the fault ended until it was current again; err when it never did.
type faultResult struct {
	detect, recover time.Duration
	err             error
}

// silentNetwork drops every packet between the exporter's Pod and the API server for d,
// with nftables rules in the Pod's own network namespace (no reset: the peer just goes
// quiet), then lifts them. It measures from the Pod's /metrics, scraped on the Pod IP, which
// the rules leave alone, and checks the lock is judged right before, during and after.
// A build under test (strict false) is only measured.
func silentNetwork(t *testing.T, c *cluster, pod corev1.Pod, d time.Duration, strict bool) faultResult {
	t.Helper()
	var r faultResult
	url := fmt.Sprintf("http://%s:10047/metrics", pod.Status.PodIP)
	before := waitMetric(t, url, `lease_exporter_watch_up 1`, 2*time.Minute)
	changesBefore := metricValue(before, `lease_observed_holder_changes_total{`, `lease="faults-elector"`)
	svc, err := c.client.CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid := exporterPid(t, &pod)
	rules := fmt.Sprintf(`table inet lease_exporter_silent {
	chain out { type filter hook output priority 0; ip daddr %[1]s tcp dport %[2]d drop; }
	chain in { type filter hook input priority 0; ip saddr %[1]s tcp sport %[2]d drop; }
}
`, svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	nft := func(args ...string) error {
		cmd := exec.Command("nsenter", append([]string{"--net=/proc/" + strconv.Itoa(pid) + "/ns/net", "nft"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("nft %v in the Pod's netns: %w: %s", args, err, out)
		}
		return nil
	}
	rulesFile := filepath.Join(t.TempDir(), "silent.nft")
	if err := os.WriteFile(rulesFile, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := nft("-f", rulesFile); err != nil {
		t.Fatal(err)
	}
	lifted := false
	lift := func() {
		if !lifted {
			lifted = true
			if err := nft("delete", "table", "inet", "lease_exporter_silent"); err != nil {
				t.Error(err)
			}
		}
	}
	defer lift()
	start := time.Now()
	for time.Since(start) < d {
		if r.detect == 0 {
			if body, err := exporterproc.ScrapeURL(url); err == nil && strings.Contains(body.Text, "\nlease_exporter_watch_up 0\n") {
				r.detect = time.Since(start)
			}
		}
		time.Sleep(time.Second)
	}
	lift()
	if r.detect == 0 {
		r.detect = d
		r.err = fmt.Errorf("the exporter never reported its watch down during %s of silence", d)
	}
	ended := time.Now()
	after := waitMetric(t, url, `lease_exporter_watch_stale_seconds 0`, 3*time.Minute)
	r.recover = time.Since(ended)
	if !strict {
		return r
	}
	if got := metricValue(after, `lease_observed_holder_changes_total{`, `lease="faults-elector"`); got != changesBefore {
		t.Errorf("lease_observed_holder_changes_total went from %v to %v across the silence, without a failover: double-counted", changesBefore, got)
	}
	if !strings.Contains(after.Text, `lease_held{class="leader-election",kind="Lease",lease="faults-elector",namespace="faults"} 1`) {
		t.Errorf("after the silence the elector's Lease is not judged held:\n%s", grepLines(after.Text, "faults-elector"))
	}
	return r
}

// waitMetric scrapes url until a line contains want, and returns that scrape.
func waitMetric(t *testing.T, url, want string, timeout time.Duration) *exporterproc.Scrape {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s, err := exporterproc.ScrapeURL(url)
		if err == nil && strings.Contains(s.Text, "\n"+want+"\n") {
			return s
		}
		if time.Now().After(deadline) {
			text := ""
			if s != nil {
				text = grepLines(s.Text, "lease_exporter_watch")
			}
			t.Fatalf("%s never showed %q within %s (err %v):\n%s", url, want, timeout, err, text)
		}
		time.Sleep(time.Second)
	}
}

// metricValue is the value of the one line starting with prefix and containing match, -1 if none.
func metricValue(s *exporterproc.Scrape, prefix, match string) float64 {
	for _, l := range strings.Split(s.Text, "\n") {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, match) {
			f := strings.Fields(l)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// startPodPrometheus runs Debian's Prometheus on the host, scraping the Pod every 5 s and
// evaluating the shipped alerts as a user's Prometheus would.
func startPodPrometheus(t *testing.T, podIP string) *promstack.Process {
	t.Helper()
	p, err := promstack.StartPrometheus(context.Background(), t.TempDir(), promstack.PrometheusOptions{
		Targets:        []string{podIP + ":10047"},
		RuleFiles:      []string{filepath.Join(tools.RepoRoot(t), "alerts", "lease-exporter.rules.yml")},
		ScrapeInterval: 5 * time.Second, EvaluationPeriod: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// checkNoFalsePage fails if any per-lease alert fired over the last window: the elector held
// its Lease throughout, so any page about it is false. The exporter's own alerts may fire.
func checkNoFalsePage(t *testing.T, prom *promstack.Process, window time.Duration) {
	t.Helper()
	q := fmt.Sprintf(`max by (alertname, lease) (max_over_time(ALERTS{alertstate="firing",alertname!~"LeaseExporter.*"}[%ds]))`, int(window.Seconds()))
	res, err := promstack.Query(prom.URL, q)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(res); s != "[]" {
		t.Errorf("alerts fired about a Lease that was held throughout (false pages): %s", s)
	}
}

// checkPodUnbroken fails if the Pod restarted or left Ready: a fault outside the Pod must
// not make its probes kill or unlist it (readiness means the cache synced once).
func checkPodUnbroken(t *testing.T, c *cluster, pod corev1.Pod) {
	t.Helper()
	p, err := c.client.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !podReady(p) {
		t.Errorf("Pod %s is not Ready after the fault", p.Name)
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.RestartCount != 0 {
			t.Errorf("Pod %s container %s restarted %d times", p.Name, s.Name, s.RestartCount)
		}
	}
}

// waitRolled waits for the one Ready Pod that replaced old after an upgrade.
func waitRolled(t *testing.T, c *cluster, old string) corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		pods := c.readyPods(t, releaseNS, selector, 1, 3*time.Minute)
		if pods[0].Name != old {
			return pods[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("Pod %s was never replaced", old)
		}
		time.Sleep(time.Second)
	}
}
