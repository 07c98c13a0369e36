//go:build release

package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testKustomize applies a Kustomize tree as docs/deploy.md says, through a user's own
// overlay that only pins the image tag (the trees name the image without one), waits for
// every Deployment's Pods to be Ready through their probes, checks that the Service judges
// the elector's Lease, and deletes it all again.
func testKustomize(t *testing.T, c *cluster, img image, tree string) {
	overlay := t.TempDir()
	rel, err := filepath.Rel(overlay, filepath.Join(c.root, tree))
	if err != nil {
		t.Fatal(err)
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\nimages:\n  - name: %s\n    newTag: %s\n",
		rel, img.repository, img.tag)
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	c.kubectl(t, "apply", "-k", overlay)
	defer func() {
		c.kubectl(t, "delete", "-k", overlay, "--wait=true", "--timeout=3m")
		c.readyPods(t, releaseNS, selector, 0, 2*time.Minute)
	}()
	c.kubectl(t, "wait", "--for=condition=Available", "deployment", "--all", "-n", releaseNS, "--timeout=4m")
	deps, err := c.client.AppsV1().Deployments(releaseNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, d := range deps.Items {
		want += int(*d.Spec.Replicas)
	}
	pods := c.readyPods(t, releaseNS, selector, want, 3*time.Minute)
	t.Logf("%s: %d Deployments, %d Pods Ready", tree, len(deps.Items), len(pods))
	for i := range pods {
		if uid := processUID(t, &pods[i]); uid != "65532" {
			t.Errorf("Pod %s runs as uid %s, want 65532", pods[i].Name, uid)
		}
	}
	c.waitJudged(t, releaseNS, "lease-exporter", electionsNS, "node-elector")
}
