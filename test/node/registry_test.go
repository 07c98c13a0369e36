//go:build release

package node_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/node"
	"github.com/lease-exporter/lease-exporter/internal/testenv/release"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// registryVersion is the version HEAD's chart, Kustomize base and changelog name, which
// `make release` requires.
const registryVersion = "0.1.0"

// testHelmChartFromARegistry installs as a user does once a release is published, with nothing
// from a clone: `make release` (in a fresh clone, which the test then leaves alone) pushed to a
// real OCI registry on loopback, then `helm install oci://…/lease-exporter --version X.Y.Z`
// overriding only image.repository. containerd pulls the multi-arch index by the digest the
// release recorded, the Pods are Ready as 65532, judge the elector's Lease, and
// `lease-exporter --version` in the Pod says X.Y.Z.
func testHelmChartFromARegistry(t *testing.T, c *cluster) {
	dist := release.Build(t, registryVersion)
	reg := release.StartRegistry(t)
	repo, digest := release.Push(t, dist, reg, registryVersion)
	if err := node.TrustLoopbackRegistry(reg); err != nil {
		t.Fatal(err)
	}
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
