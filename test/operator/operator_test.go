//go:build release

// Package operator_test proves the chart's ServiceMonitor and PrometheusRule in the hands of
// a real Prometheus Operator (hack/prometheus-operator/build.sh), as kube-prometheus-stack
// runs it, on a control plane without a node; test/node scrapes the Pods it selects.
package operator_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promoperator"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

const (
	// kpsRelease is the kube-prometheus-stack release docs/deploy.md wires the chart into.
	kpsRelease  = "kube-prometheus-stack"
	chartDir    = "deploy/helm/lease-exporter"
	releaseName = "lease-exporter"
	releaseNS   = "monitoring"
)

// TestPrometheusOperatorReconcilesChart installs the chart as docs/deploy.md's "Wiring into
// kube-prometheus-stack" says, next to the Prometheus Operator and the Prometheus object
// kube-prometheus-stack creates by default, and checks that the operator turns the chart's
// ServiceMonitor into a scrape job and its PrometheusRule into loaded rules, in a real
// Prometheus running the operator's configuration. Without a node no Pod runs, so the
// target's `up` is for the node suite; this proves selection, generation and loading.
func TestPrometheusOperatorReconcilesChart(t *testing.T) {
	helm := tools.Helm(t)
	// The build first: the test's own bound starts once it is done.
	opDir := promoperator.BuildForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cp := controlplane.StartForTest(t)
	am, err := promstack.StartAlertmanager(ctx, t.TempDir(), promstack.AlertmanagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(am.Stop)
	stack := promoperator.StartForTest(t, cp, promoperator.Options{Release: kpsRelease, AlertmanagerURL: am.URL, OperatorDir: opDir})

	t.Run("operator is the vendored CRDs' release", func(t *testing.T) {
		checkOperatorMatchesVendoredCRDs(t, stack)
	})

	root := tools.RepoRoot(t)
	cmd := exec.Command(helm, "install", releaseName, filepath.Join(root, chartDir),
		"--kubeconfig", cp.KubeconfigPath(), "--namespace", releaseNS, "--create-namespace",
		"--set", "serviceMonitor.enabled=true",
		"--set", "serviceMonitor.additionalLabels.release="+kpsRelease,
		"--set", "prometheusRule.enabled=true",
		"--set", "prometheusRule.additionalLabels.release="+kpsRelease,
		"--set", "dashboards.enabled=true")
	cmd.Dir, cmd.Env = root, append(os.Environ(), tools.HelmEnv(t)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	dyn, err := dynamic.NewForConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	// The same objects without the release label: kube-prometheus-stack must ignore them.
	unlabelled := releaseName + "-unlabelled"
	for _, res := range []string{"servicemonitors", "prometheusrules"} {
		copyWithoutRelease(ctx, t, dyn, res, unlabelled)
	}

	job := promoperator.ServiceMonitorJob(releaseNS, releaseName, 0)
	loaded, err := stack.WaitScrapeJob(ctx, job, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("scrape job as the ServiceMonitor says", func(t *testing.T) {
		checkScrapeJob(t, loaded)
	})
	t.Run("rewrite leaves the job as generated", func(t *testing.T) {
		checkRewriteKeepsJob(t, stack, job)
	})
	t.Run("rules loaded", func(t *testing.T) {
		checkRulesLoaded(ctx, t, stack, dyn, unlabelled)
	})
	t.Run("unlabelled ServiceMonitor not selected", func(t *testing.T) {
		cfg, err := stack.LoadedConfig(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if sc := promoperator.ScrapeConfig(cfg, promoperator.ServiceMonitorJob(releaseNS, unlabelled, 0)); sc != nil {
			t.Errorf("Prometheus scrapes the ServiceMonitor without release=%s: kube-prometheus-stack would not", kpsRelease)
		}
	})
	t.Run("service discovery reads the API server", func(t *testing.T) {
		// Discovery runs with the ServiceAccount token and kube-prometheus-stack's ClusterRole;
		// its Service informer has seen the chart's Service once its list and watch work. (Read
		// from Prometheus's own /metrics: nothing scrapes Prometheus here.)
		waitSDServiceAdds(t, stack, time.Minute)
	})
	t.Run("alerts go to the Alertmanager", func(t *testing.T) {
		// Prometheus's notifier picks up a reloaded target within its discovery interval (5s).
		var ams []string
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && len(ams) == 0; time.Sleep(500 * time.Millisecond) {
			if ams, err = stack.Alertmanagers(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if len(ams) != 1 || !strings.HasPrefix(ams[0], am.URL+"/") {
			t.Errorf("Prometheus alerts to %v, want only %s", ams, am.URL)
		}
	})
}

// checkOperatorMatchesVendoredCRDs: the deploy tests validate against the vendored CRDs, so
// they must be the running operator's.
func checkOperatorMatchesVendoredCRDs(t *testing.T, stack *promoperator.Stack) {
	crds := filepath.Join(tools.RepoRoot(t), "test", "deploy", "testdata", "crds")
	want, err := os.ReadFile(filepath.Join(crds, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if got := stack.OperatorVersion(); got != strings.TrimSpace(string(want)) {
		t.Fatalf("operator %s, vendored CRDs %s: keep hack/prometheus-operator/go.mod and test/deploy/testdata/crds/VERSION equal", got, want)
	}
	for _, plural := range []string{"servicemonitors", "prometheusrules"} {
		vendored, err := os.ReadFile(filepath.Join(crds, "monitoring.coreos.com_"+plural+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		shipped, err := os.ReadFile(promoperator.CRDFile(stack.OperatorDir(), plural))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(vendored, shipped) {
			t.Errorf("vendored %s CRD differs from the operator's own: run test/deploy/testdata/crds/fetch.sh", plural)
		}
	}
}

// copyWithoutRelease creates a copy of the chart's object of resource, named name, without the
// release label.
func copyWithoutRelease(ctx context.Context, t *testing.T, dyn dynamic.Interface, resource, name string) {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: resource}
	orig, err := dyn.Resource(gvr).Namespace(releaseNS).Get(ctx, releaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's %s: %v", resource, err)
	}
	if orig.GetLabels()["release"] != kpsRelease {
		t.Fatalf("the chart's %s lacks release=%s: %v", resource, kpsRelease, orig.GetLabels())
	}
	labels := orig.GetLabels()
	delete(labels, "release")
	cp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": orig.GetAPIVersion(), "kind": orig.GetKind(),
		"metadata": map[string]any{"name": name, "namespace": releaseNS},
		"spec":     orig.Object["spec"],
	}}
	cp.SetLabels(labels)
	if _, err := dyn.Resource(gvr).Namespace(releaseNS).Create(ctx, cp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitSDServiceAdds(t *testing.T, stack *promoperator.Stack, timeout time.Duration) {
	t.Helper()
	var err error
	var adds []exporterproc.Sample
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(time.Second) {
		var sc *exporterproc.Scrape
		if sc, err = exporterproc.ScrapeURL(stack.PrometheusURL() + "/metrics"); err != nil {
			continue
		}
		adds = sc.Series("prometheus_sd_kubernetes_events_total", map[string]string{"role": "service", "event": "add"})
		if len(adds) == 1 && adds[0].Value > 0 {
			return
		}
	}
	t.Errorf("Prometheus's Kubernetes discovery saw no Service within %s: %v (%v)", timeout, adds, err)
}
