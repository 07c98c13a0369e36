//go:build release

package node_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/node"
	"github.com/lease-exporter/lease-exporter/internal/testenv/release"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

const (
	// registryVersion is the version HEAD's chart, Kustomize base and changelog name, which
	// `make release` requires.
	registryVersion = "0.1.0"
	// The pre-release: the commit issue 49 started from, before releases existed, built with
	// its own Dockerfile and chart and tagged as a pre-release of the first release.
	preReleaseCommit  = "eafc1e0"
	preReleaseVersion = "0.1.0-rc.0"
)

// testFromARegistry installs as users will once releases are published, with nothing from a
// clone: `make release` (in a fresh clone, which the test then leaves alone) and the
// pre-release, pushed to a real OCI registry on loopback that the node's containerd pulls from.
func testFromARegistry(t *testing.T, c *cluster) {
	reg := release.StartRegistry(t)
	dist := release.Build(t, registryVersion)
	repo, digest := release.Push(t, dist, reg, registryVersion)
	if err := node.TrustLoopbackRegistry(reg); err != nil {
		t.Fatal(err)
	}
	t.Run("Install", func(t *testing.T) { testInstallFromARegistry(t, c, reg, repo, digest) })
	t.Run("UpgradeFromThePreRelease", func(t *testing.T) { testUpgradeFromThePreRelease(t, c, reg, repo) })
}

// testInstallFromARegistry: `helm install oci://…/lease-exporter --version X.Y.Z` overriding
// only image.repository. containerd pulls the multi-arch index by the digest the release
// recorded, the Pods are Ready as 65532, judge the elector's Lease, and `lease-exporter
// --version` in the Pod says X.Y.Z.
func testInstallFromARegistry(t *testing.T, c *cluster, reg, repo, digest string) {
	c.run(t, tools.Helm(t), "install", "lease-exporter", "oci://"+reg+"/charts/lease-exporter",
		"--version", registryVersion, "--plain-http",
		"--namespace", releaseNS, "--create-namespace", "--wait", "--timeout", "4m",
		"--set", "image.repository="+repo)
	pods := c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	for i := range pods {
		p := &pods[i]
		if uid := processUID(t, p); uid != "65532" {
			t.Errorf("Pod %s runs as uid %s, want 65532", p.Name, uid)
		}
		for _, s := range p.Status.ContainerStatuses {
			if s.Image != repo+":v"+registryVersion {
				t.Errorf("Pod %s runs image %s, want %s:v%s (the chart's tag, from appVersion)", p.Name, s.Image, repo, registryVersion)
			}
			if s.ImageID != repo+"@"+digest {
				t.Errorf("Pod %s's image resolved to %s, want %s@%s (the index make release recorded)", p.Name, s.ImageID, repo, digest)
			}
		}
		out := c.kubectl(t, "exec", "-n", releaseNS, p.Name, "--", "/bin/lease-exporter", "--version")
		if !strings.Contains(out, "version "+registryVersion+" ") {
			t.Errorf("lease-exporter --version in Pod %s = %q, want version %s", p.Name, out, registryVersion)
		}
	}
	c.waitJudged(t, releaseNS, "lease-exporter", electionsNS, "node-elector")
	c.run(t, tools.Helm(t), "uninstall", "lease-exporter", "--namespace", releaseNS, "--wait")
}

// testUpgradeFromThePreRelease: the pre-release, installed from the registry with Events and
// the chart's two replicas and PDB, records a failover; `helm upgrade` to X.Y.Z from the
// registry then rolls the Pods while, twice a second, every Ready replica is scraped as
// Prometheus scrapes the endpoints: no 5 s passes without one answering (the chart's scrape
// interval is 30 s), the new replicas show the pre-release's failover rebuilt from its Events,
// and `helm uninstall` leaves only what docs/deploy.md says remains, the election Lease.
func testUpgradeFromThePreRelease(t *testing.T, c *cluster, reg, repo string) {
	pushPreRelease(t, reg, repo)
	values := []string{"--plain-http", "--namespace", releaseNS, "--wait", "--timeout", "4m",
		"--set", "image.repository=" + repo, "--set", "events.enabled=true"}
	c.run(t, tools.Helm(t), append([]string{"install", "lease-exporter", "oci://" + reg + "/charts/lease-exporter",
		"--version", preReleaseVersion, "--create-namespace"}, values...)...)
	waitOneWriter(t, c, 2*time.Minute)
	old := failElectorOver(t, c)

	var (
		mu            sync.Mutex
		polls, failed int
		longest       time.Duration
		lastOK        = time.Now()
		firstErr      error
	)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			err := scrapeAnyReplica(c)
			mu.Lock()
			polls++
			if err != nil {
				failed++
				firstErr = cmp.Or(firstErr, err)
				longest = max(longest, time.Since(lastOK))
			} else {
				lastOK = time.Now()
			}
			mu.Unlock()
		}
	}()
	start := time.Now()
	c.run(t, tools.Helm(t), append([]string{"upgrade", "lease-exporter", "oci://" + reg + "/charts/lease-exporter",
		"--version", registryVersion}, values...)...)
	pods := c.readyPods(t, releaseNS, selector, 2, 3*time.Minute)
	close(stop)
	<-done
	t.Logf("helm upgrade %s → %s: %s; %d rounds of scrapes, %d with no replica answering, longest without an answer %s (first error: %v)",
		preReleaseVersion, registryVersion, time.Since(start).Round(time.Second), polls, failed, longest.Round(100*time.Millisecond), firstErr)
	if longest >= 5*time.Second {
		t.Errorf("no replica answered a scrape for %s during the upgrade, want under 5 s", longest.Round(100*time.Millisecond))
	}
	for _, p := range pods {
		for _, s := range p.Status.ContainerStatuses {
			if s.Image != repo+":v"+registryVersion {
				t.Errorf("after the upgrade Pod %s runs %s, want %s:v%s", p.Name, s.Image, repo, registryVersion)
			}
		}
	}
	for _, p := range pods {
		waitRebuiltTenure(t, p.Status.PodIP, old)
	}

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
	left := strings.TrimSpace(c.kubectl(t, "get", "all,configmaps,serviceaccounts,roles,rolebindings,poddisruptionbudgets,networkpolicies,leases",
		"-n", releaseNS, "-o", "name"))
	var leftover []string
	for _, o := range strings.Fields(left) {
		if o != "configmap/kube-root-ca.crt" && o != "serviceaccount/default" {
			leftover = append(leftover, o)
		}
	}
	if strings.Join(leftover, " ") != "lease.coordination.k8s.io/lease-exporter-events" {
		t.Errorf("after helm uninstall %s holds %v, want only the election Lease docs/deploy.md names", releaseNS, leftover)
	}
	cluster := strings.TrimSpace(c.kubectl(t, "get", "clusterroles,clusterrolebindings", "-l", "app.kubernetes.io/instance=lease-exporter", "-o", "name"))
	if cluster != "" {
		t.Errorf("after helm uninstall the cluster still holds %s", cluster)
	}
	// docs/deploy.md's command for what remains.
	c.kubectl(t, "delete", "lease", "-n", releaseNS, "lease-exporter-events")
}

// pushPreRelease builds the pre-release from preReleaseCommit as that commit built images and
// charts (its hack/image/build.sh, its chart packaged at the pre-release's version) and pushes
// both to the registry, beside the release.
func pushPreRelease(t *testing.T, reg, repo string) {
	t.Helper()
	dir := release.Clone(t)
	release.Run(t, dir, nil, "git", "checkout", "--quiet", preReleaseCommit)
	out := strings.Fields(release.Run(t, dir, []string{"VERSION=" + preReleaseVersion}, "hack/image/build.sh"))
	archive := out[len(out)-1]
	release.Run(t, "", nil, filepath.Join(release.Tools(t), "crane"), "push", "--insecure", archive, repo+":v"+preReleaseVersion)
	charts := t.TempDir()
	henv := tools.HelmEnv(t)
	release.Run(t, "", henv, tools.Helm(t), "package", filepath.Join(dir, "deploy", "helm", "lease-exporter"),
		"--version", preReleaseVersion, "--app-version", preReleaseVersion, "-d", charts)
	release.Run(t, "", henv, tools.Helm(t), "push", "--plain-http",
		filepath.Join(charts, "lease-exporter-"+preReleaseVersion+".tgz"), "oci://"+reg+"/charts")
}

// waitRebuiltTenure waits until the exporter at podIP shows, in its JSON API, a tenure of
// holder in the elector's history marked rebuilt: read back from Events, not observed.
func waitRebuiltTenure(t *testing.T, podIP, holder string) {
	t.Helper()
	url := fmt.Sprintf("http://%s:10047/api/v1/leases/%s/node-elector", podIP, electionsNS)
	var last string
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		body, err := scrapeURL(url)
		if err != nil {
			last = err.Error()
			continue
		}
		var d struct {
			History *struct {
				Tenures []struct {
					Holder  string `json:"holder"`
					Rebuilt bool   `json:"rebuilt"`
				} `json:"tenures"`
			} `json:"history"`
		}
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		last = body
		if d.History == nil {
			continue
		}
		for _, tn := range d.History.Tenures {
			if tn.Holder == holder && tn.Rebuilt {
				return
			}
		}
	}
	t.Errorf("%s never showed %s's tenure rebuilt from the pre-release's Events; last: %s", url, holder, last)
}

// scrapeAnyReplica scrapes every Ready replica on its Pod IP, as Prometheus scrapes the
// endpoints a ServiceMonitor selects, with a 2 s timeout each; nil when one answered.
func scrapeAnyReplica(c *cluster) error {
	pods, err := c.client.CoreV1().Pods(releaseNS).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err
	}
	errs := []error{fmt.Errorf("no Ready replica")}
	for _, p := range pods.Items {
		if !podReady(&p) || p.DeletionTimestamp != nil {
			continue
		}
		client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Get(fmt.Sprintf("http://%s:10047/metrics", p.Status.PodIP))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", p.Name, resp.Status)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
