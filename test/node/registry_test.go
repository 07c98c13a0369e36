//go:build release

package node_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
// The index is signed after the push, as the release workflow signs it, and verified before
// anything is installed, as a cautious user (or an admission policy) verifies it. Then the
// release is installed alone, and upgraded to from the pre-release under Prometheus
// (operator_test.go).
func testFromARegistry(t *testing.T, c *cluster) {
	reg := release.StartRegistry(t)
	dist := release.Build(t, registryVersion)
	repo, digest, _ := release.Push(t, dist, reg, registryVersion)
	keys := release.KeyPair(t)
	if err := release.Verify(t, keys.Public, repo+"@"+digest); err == nil {
		t.Fatalf("cosign verify accepted %s@%s before it was signed", repo, digest)
	}
	release.Sign(t, keys, repo+"@"+digest)
	if err := release.Verify(t, keys.Public, repo+"@"+digest); err != nil {
		t.Fatal(err)
	}
	if err := node.TrustLoopbackRegistry(reg); err != nil {
		t.Fatal(err)
	}
	t.Run("Install", func(t *testing.T) { testInstallFromARegistry(t, c, reg, repo, digest) })
	t.Run("KubePrometheusStack", func(t *testing.T) { testKubePrometheusStack(t, c, reg, repo) })
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
