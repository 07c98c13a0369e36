//go:build release

package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
		prom := startPodPrometheus(t, c)
		defer prom.Stop()

		t.Run("SilentNetwork", func(t *testing.T) {
			r := silentNetwork(t, c, pod, 90*time.Second, true)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.detect > keepaliveBound {
				t.Errorf("the watch was seen stale %s after the network went silent, want within %s (docs/reliability.md)", r.detect.Round(time.Second), keepaliveBound)
			}
			t.Logf("silent network for 90 s: stale after %s, Pod not Ready after %s (/readyz: %q); current again %s and Ready %s after the network came back",
				r.detect.Round(100*time.Millisecond), r.notReady.Round(100*time.Millisecond), r.readyzBody, r.recover.Round(100*time.Millisecond), r.readyNext.Round(100*time.Millisecond))
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
		// The mutant is rolled back; the real exporter runs again.
		c.run(t, tools.Helm(t), "rollback", "lease-exporter", "1", "--namespace", releaseNS, "--wait", "--timeout", "4m")

		t.Run("SIGKILLMidScrape", func(t *testing.T) { sigkillMidScrape(t, c, prom) })
		t.Run("KubeletRestart", func(t *testing.T) {
			nodeRestart(t, c, prom, "kubelet", func() error { return c.n.RestartKubelet(context.Background()) })
		})
		t.Run("ContainerdRestart", func(t *testing.T) {
			nodeRestart(t, c, prom, "containerd", func() error { return c.n.RestartContainerd(context.Background()) })
		})
		t.Run("ThrottledByAPIPriorityAndFairness", func(t *testing.T) { throttledByAPF(t, c, prom) })
		t.Run("EvictionGovernedByThePodDisruptionBudget", func(t *testing.T) { evictionWithPDB(t, c, prom) })
		c.run(t, tools.Helm(t), "uninstall", "lease-exporter", "--namespace", releaseNS, "--wait")
	})
}

// faultResult is what a fault took: how long until the exporter said its view was stale
// and until the kubelet marked the Pod not Ready (with /readyz's reason), and how long after
// the fault ended until the view was current and the Pod Ready again; err when it never was.
type faultResult struct {
	detect, recover     time.Duration
	notReady, readyNext time.Duration
	readyzBody          string
	err                 error
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
	nft := func(args ...string) error { return nftIn("/proc/"+strconv.Itoa(pid)+"/ns/net", args...) }
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
	readyz := strings.TrimSuffix(url, "/metrics") + "/readyz"
	start := time.Now()
	for time.Since(start) < d {
		if r.detect == 0 {
			if body, err := exporterproc.ScrapeURL(url); err == nil && strings.Contains(body.Text, "\nlease_exporter_watch_up 0\n") {
				r.detect = time.Since(start)
			}
		}
		if r.readyzBody == "" {
			if code, body := httpGetBody(readyz); code == 503 {
				r.readyzBody = body
			}
		}
		if r.notReady == 0 && !podIsReady(t, c, pod.Name) {
			r.notReady = time.Since(start)
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
	// Stale for longer than informer.ReadyStaleAfter (10 s), the exporter is not ready and says
	// why; the kubelet's probe (every 5 s, 3 failures) then takes it out of its Service.
	if r.notReady == 0 {
		t.Errorf("the Pod stayed Ready through %s of a stale view (/readyz said %q)", d, r.readyzBody)
	}
	if !strings.Contains(r.readyzBody, "stale for") {
		t.Errorf("/readyz during the silence said %q, want 503 naming the staleness", r.readyzBody)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !podIsReady(t, c, pod.Name) {
		if time.Now().After(deadline) {
			t.Fatalf("Pod %s not Ready 2 minutes after the network came back", pod.Name)
		}
		time.Sleep(250 * time.Millisecond)
	}
	r.readyNext = time.Since(ended)
	if got := metricValue(after, `lease_observed_holder_changes_total{`, `lease="faults-elector"`); got != changesBefore {
		t.Errorf("lease_observed_holder_changes_total went from %v to %v across the silence, without a failover: double-counted", changesBefore, got)
	}
	if !strings.Contains(after.Text, `lease_held{class="leader-election",kind="Lease",lease="faults-elector",namespace="faults"} 1`) {
		t.Errorf("after the silence the elector's Lease is not judged held:\n%s", grepLines(after.Text, "faults-elector"))
	}
	return r
}

// nftIn runs nft with args in the network namespace at netns (a Pod's).
func nftIn(netns string, args ...string) error {
	cmd := exec.Command("nsenter", append([]string{"--net=" + netns, "nft"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft %v in the Pod's netns: %w: %s", args, err, out)
	}
	return nil
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

// startPodPrometheus runs Debian's Prometheus on the host, scraping the chart's Pods every 5 s
// and evaluating the shipped alerts. Debian builds Prometheus without Kubernetes service
// discovery, so the test plays it: every second it writes the Pods' addresses, as role pod
// would find them, to a file_sd target file.
func startPodPrometheus(t *testing.T, c *cluster) *promstack.Process {
	t.Helper()
	dir := t.TempDir()
	targets := filepath.Join(dir, "targets.json")
	discover := func() error {
		pods, err := c.client.CoreV1().Pods(releaseNS).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		var groups []map[string]any
		for _, p := range pods.Items {
			if p.Status.PodIP != "" && p.Status.Phase == corev1.PodRunning {
				groups = append(groups, map[string]any{"targets": []string{p.Status.PodIP + ":10047"}, "labels": map[string]string{"pod": p.Name}})
			}
		}
		b, _ := json.Marshal(groups)
		tmp := targets + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, targets)
	}
	if err := discover(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
				_ = discover()
			}
		}
	}()
	cfg := fmt.Sprintf(`global: {scrape_interval: 5s, evaluation_interval: 5s}
rule_files: [%q]
scrape_configs:
  - job_name: lease-exporter
    honor_labels: true
    file_sd_configs: [{files: [%q], refresh_interval: 5s}]
`, filepath.Join(tools.RepoRoot(t), "alerts", "lease-exporter.rules.yml"), targets)
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := promstack.StartPrometheusConfig(context.Background(), "", dir, path)
	if err != nil {
		close(stop)
		t.Fatal(err)
	}
	t.Cleanup(func() { close(stop) })
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

// checkPodUnbroken fails if the Pod restarted or is not Ready: a fault outside the Pod must
// not make its liveness probe kill it, and once it is over the Pod is Ready.
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

// readyExporter is the one Ready exporter Pod, and its /metrics URL on the Pod IP.
func readyExporter(t *testing.T, c *cluster) (corev1.Pod, string) {
	t.Helper()
	pod := c.readyPods(t, releaseNS, selector, 1, 3*time.Minute)[0]
	return pod, fmt.Sprintf("http://%s:10047/metrics", pod.Status.PodIP)
}

// sigkillMidScrape kills the exporter's process with SIGKILL while scrapes stream from it:
// the kubelet restarts the container, the Pod is Ready again, the restart shows (a new
// process_start_time_seconds, restartCount 1), and no per-lease alert fires meanwhile.
func sigkillMidScrape(t *testing.T, c *cluster, prom *promstack.Process) {
	pod, url := readyExporter(t, c)
	waitMetric(t, url, `lease_exporter_watch_up 1`, 2*time.Minute)
	before := metricValue(mustScrape(t, url), "process_start_time_seconds", "")
	var wg sync.WaitGroup
	var scrapes, failed atomic.Int32
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := exporterproc.ScrapeURL(url); err != nil {
					failed.Add(1)
					time.Sleep(100 * time.Millisecond)
				}
				scrapes.Add(1)
			}
		})
	}
	time.Sleep(2 * time.Second)
	inFlight := scrapes.Load()
	killed := time.Now()
	if err := syscall.Kill(exporterPid(t, &pod), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var down time.Duration
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if s, err := exporterproc.ScrapeURL(url); err == nil {
			if start := metricValue(s, "process_start_time_seconds", ""); start != before && start > 0 {
				down = time.Since(killed)
				break
			}
		}
		if time.Now().After(deadline) {
			close(stop)
			wg.Wait()
			t.Fatalf("no scrape from a restarted exporter within 3 minutes of the SIGKILL")
		}
	}
	close(stop)
	wg.Wait()
	p := c.readyPods(t, releaseNS, selector, 1, 3*time.Minute)[0]
	if p.Name != pod.Name || p.Status.ContainerStatuses[0].RestartCount != 1 {
		t.Errorf("after the SIGKILL: Pod %s, restartCount %d; want the same Pod %s with its container restarted once", p.Name, p.Status.ContainerStatuses[0].RestartCount, pod.Name)
	}
	waitMetric(t, url, `lease_exporter_watch_up 1`, 2*time.Minute)
	checkNoFalsePage(t, prom, 10*time.Minute)
	t.Logf("SIGKILL during %d scrapes (%d failed): scrapes answered again by the restarted exporter %s later", inFlight, failed.Load(), down.Round(100*time.Millisecond))
}

// nodeRestart restarts a node daemon under the running Pod: the container must not restart
// (the kubelet and containerd leave running containers alone), the Pod stays or comes back
// Ready, the scrapes' longest gap is measured, and no per-lease alert fires.
func nodeRestart(t *testing.T, c *cluster, prom *promstack.Process, what string, restart func() error) {
	pod, url := readyExporter(t, c)
	restarts := pod.Status.ContainerStatuses[0].RestartCount
	var longest time.Duration
	done := make(chan error, 1)
	go func() { done <- restart() }()
	lastOK, finished := time.Now(), false
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("restart %s: %v", what, err)
			}
			finished = true
		default:
		}
		_, err := exporterproc.ScrapeURL(url)
		if err == nil {
			lastOK = time.Now()
		} else {
			longest = max(longest, time.Since(lastOK))
		}
		if finished && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter did not answer within 3 minutes of the %s restart (finished %v): %v", what, finished, err)
		}
	}
	p := c.readyPods(t, releaseNS, selector, 1, 3*time.Minute)[0]
	if p.Name != pod.Name || p.Status.ContainerStatuses[0].RestartCount != restarts {
		t.Errorf("after the %s restart: Pod %s restartCount %d, want Pod %s still at %d", what, p.Name, p.Status.ContainerStatuses[0].RestartCount, pod.Name, restarts)
	}
	waitMetric(t, url, `lease_exporter_watch_up 1`, 2*time.Minute)
	checkNoFalsePage(t, prom, 10*time.Minute)
	t.Logf("%s restarted under the Pod: longest gap between answered scrapes %s, container not restarted", what, longest.Round(100*time.Millisecond))
}

// evictionWithPDB scales to the chart's two replicas (which renders its PodDisruptionBudget,
// minAvailable 1), evicts one Pod through the API, and is refused the second eviction until
// the first Pod's replacement is Ready: metrics never stop, no per-lease alert fires.
func evictionWithPDB(t *testing.T, c *cluster, prom *promstack.Process) {
	ctx := context.Background()
	c.run(t, tools.Helm(t), "upgrade", "lease-exporter", "deploy/helm/lease-exporter", "--namespace", releaseNS,
		"--wait", "--timeout", "4m", "--reuse-values", "--set", "replicaCount=2")
	pods := c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	if err := waitPDBAllows(c, 1); err != nil {
		t.Fatal(err)
	}
	evict := func(p corev1.Pod) error {
		return c.client.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}})
	}
	evicted := time.Now()
	if err := evict(pods[0]); err != nil {
		t.Fatalf("evict %s with both replicas Ready: %v", pods[0].Name, err)
	}
	if err := evict(pods[1]); !apierrors.IsTooManyRequests(err) {
		t.Errorf("evicting %s while %s is gone: %v, want 429 from the PodDisruptionBudget", pods[1].Name, pods[0].Name, err)
	}
	other := fmt.Sprintf("http://%s:10047/metrics", pods[1].Status.PodIP)
	for time.Since(evicted) < 5*time.Second {
		if _, err := exporterproc.ScrapeURL(other); err != nil {
			t.Errorf("the replica left was not scraped while the other was evicted: %v", err)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	replaced := time.Since(evicted)
	if err := waitPDBAllows(c, 1); err != nil {
		t.Fatal(err)
	}
	if err := evict(pods[1]); err != nil {
		t.Errorf("evict %s once its peer's replacement is Ready: %v", pods[1].Name, err)
	}
	c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	checkNoFalsePage(t, prom, 10*time.Minute)
	t.Logf("evicted one of two replicas: the second eviction refused by the PodDisruptionBudget, the replacement Ready %s later", replaced.Round(100*time.Millisecond))
	c.run(t, tools.Helm(t), "upgrade", "lease-exporter", "deploy/helm/lease-exporter", "--namespace", releaseNS,
		"--wait", "--timeout", "4m", "--reuse-values", "--set", "replicaCount=1")
}

// waitPDBAllows waits until the chart's PodDisruptionBudget allows want disruptions: the
// disruption controller updates it a moment after the Pods become Ready.
func waitPDBAllows(c *cluster, want int32) error {
	deadline := time.Now().Add(time.Minute)
	for {
		pdbs, err := c.client.PolicyV1().PodDisruptionBudgets(releaseNS).List(context.Background(), metav1.ListOptions{})
		if err == nil && len(pdbs.Items) == 1 && pdbs.Items[0].Status.DisruptionsAllowed == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the PodDisruptionBudget never allowed %d disruptions (%v): %v", want, err, pdbs)
		}
		time.Sleep(time.Second)
	}
}

// podIsReady reports whether the Pod's Ready condition is True, as the API server has it.
func podIsReady(t *testing.T, c *cluster, name string) bool {
	t.Helper()
	p, err := c.client.CoreV1().Pods(releaseNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return podReady(p)
}

// httpGetBody GETs url (on a Pod IP) with a short timeout: its status and body, 0 on error.
func httpGetBody(url string) (int, string) {
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func mustScrape(t *testing.T, url string) *exporterproc.Scrape {
	t.Helper()
	s, err := exporterproc.ScrapeURL(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
