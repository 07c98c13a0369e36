//go:build release

package operator_test

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/lease-exporter/lease-exporter/internal/testenv/promoperator"
)

// checkScrapeJob: the job Prometheus runs for the chart's ServiceMonitor finds the Service's
// endpoints, keeps only the chart's Service and its http-metrics port, names the job after
// the Service's app.kubernetes.io/name label (jobLabel) and honours the exporter's labels.
func checkScrapeJob(t *testing.T, sc map[string]any) {
	t.Helper()
	if sc["honor_labels"] != true {
		t.Errorf("honor_labels = %v, want true (the exporter's namespace label is the Lease's)", sc["honor_labels"])
	}
	if sc["metrics_path"] != "/metrics" || sc["scrape_interval"] != "30s" {
		t.Errorf("metrics_path %v, scrape_interval %v: want /metrics every 30s (the chart's defaults)", sc["metrics_path"], sc["scrape_interval"])
	}
	sds, _ := sc["kubernetes_sd_configs"].([]any)
	if len(sds) != 1 {
		t.Fatalf("kubernetes_sd_configs = %v, want one", sc["kubernetes_sd_configs"])
	}
	sd := sds[0].(map[string]any)
	if sd["role"] != "endpoints" || !reflect.DeepEqual(sd["namespaces"], map[string]any{"own_namespace": false, "names": []any{releaseNS}}) {
		t.Errorf("service discovery %v, want role endpoints in namespace %s only", sd, releaseNS)
	}
	relabel, _ := sc["relabel_configs"].([]any)
	for _, want := range []struct {
		what   string
		source string
		action string
		regex  string
		target string
	}{
		{"keeps the chart's Service by name label", "__meta_kubernetes_service_label_app_kubernetes_io_name", "keep", "(lease-exporter);true", ""},
		{"keeps the chart's Service by instance label", "__meta_kubernetes_service_label_app_kubernetes_io_instance", "keep", "(" + releaseName + ");true", ""},
		{"keeps the port named http-metrics", "__meta_kubernetes_endpoint_port_name", "keep", "http-metrics", ""},
		{"names the job after jobLabel", "__meta_kubernetes_service_label_app_kubernetes_io_name", "replace", "(.+)", "job"},
	} {
		found := slices.ContainsFunc(relabel, func(r any) bool {
			m := r.(map[string]any)
			src, _ := m["source_labels"].([]any)
			return m["action"] == want.action && len(src) > 0 && src[0] == want.source &&
				m["regex"] == want.regex && (want.target == "" || m["target_label"] == want.target)
		})
		if !found {
			t.Errorf("relabelling never %s (%s %s =~ %s)", want.what, want.action, want.source, want.regex)
		}
	}
	if t.Failed() {
		b, _ := yaml.Marshal(sc)
		t.Logf("the job as Prometheus runs it:\n%s", b)
	}
}

// checkRewriteKeepsJob: the host run changes the job only by pointing its service discovery
// at the test's kubeconfig; everything that decides what is scraped and how is as the Pod's
// Prometheus would read it (the generated job with the config-reloader's $(SHARD) filled in).
func checkRewriteKeepsJob(t *testing.T, stack *promoperator.Stack, job string) {
	pod, err := stack.PodConfig()
	if err != nil {
		t.Fatal(err)
	}
	gen := promoperator.ScrapeConfig(yamlMap(t, pod), job)
	run := promoperator.ScrapeConfig(yamlMap(t, stack.RunConfig()), job)
	if gen == nil || run == nil {
		t.Fatalf("job %s: in the generated configuration %v, in the rewritten one %v", job, gen != nil, run != nil)
	}
	if !reflect.DeepEqual(withoutKubeconfig(run), gen) {
		g, _ := yaml.Marshal(gen)
		r, _ := yaml.Marshal(run)
		t.Errorf("the rewrite changed job %s beyond kubeconfig_file\ngenerated:\n%s\nrewritten:\n%s", job, g, r)
	}
	for _, sd := range run["kubernetes_sd_configs"].([]any) {
		if sd.(map[string]any)["kubeconfig_file"] == nil {
			t.Errorf("rewritten service discovery %v has no kubeconfig_file: Prometheus would look for in-cluster config", sd)
		}
	}
}

// checkRulesLoaded: Prometheus loaded every rule of the chart's PrometheusRule (LeaseNoLeader
// among them) without errors, from the operator's rule file for it, and none of the
// unlabelled copy's.
func checkRulesLoaded(ctx context.Context, t *testing.T, stack *promoperator.Stack, dyn dynamic.Interface, unlabelled string) {
	gvr := schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"}
	pr, err := dyn.Resource(gvr).Namespace(releaseNS).Get(ctx, releaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := ruleNames(t, pr)
	if !slices.Contains(want, "alerting/LeaseNoLeader") {
		t.Fatalf("the chart's PrometheusRule has no LeaseNoLeader: %v", want)
	}
	rules, err := stack.WaitRules(ctx, time.Minute, "LeaseNoLeader")
	if err != nil {
		t.Fatal(err)
	}
	// The operator names a PrometheusRule's file <namespace>-<name>-<uid>.yaml.
	file := releaseNS + "-" + releaseName + "-" + string(pr.GetUID()) + ".yaml"
	var got []string
	for _, r := range rules {
		if strings.Contains(r.File, unlabelled) {
			t.Errorf("rule %s loaded from %s: the PrometheusRule without release=%s is selected", r.Name, r.File, kpsRelease)
		}
		if !strings.HasSuffix(r.File, "/"+file) {
			continue
		}
		got = append(got, r.Type+"/"+r.Name)
		if r.Health == "err" {
			t.Errorf("rule %s: health err", r.Name)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("loaded from %s:\n  %v\nthe PrometheusRule has:\n  %v", file, got, want)
	}
}

// ruleNames are the chart's PrometheusRule's rules as "alerting/Name" and "recording/name".
func ruleNames(t *testing.T, pr *unstructured.Unstructured) []string {
	t.Helper()
	var names []string
	groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			m := r.(map[string]any)
			if a, ok := m["alert"].(string); ok {
				names = append(names, "alerting/"+a)
			} else if rec, ok := m["record"].(string); ok {
				names = append(names, "recording/"+rec)
			}
		}
	}
	slices.Sort(names)
	return names
}

// yamlMap parses a YAML document into a map, failing t on error.
func yamlMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// withoutKubeconfig is a scrape config with kubeconfig_file removed from its service
// discovery, the one field the rewrite adds to a scrape job.
func withoutKubeconfig(sc map[string]any) map[string]any {
	out := maps.Clone(sc)
	var sds []any
	for _, sd := range sc["kubernetes_sd_configs"].([]any) {
		m := maps.Clone(sd.(map[string]any))
		delete(m, "kubeconfig_file")
		sds = append(sds, m)
	}
	out["kubernetes_sd_configs"] = sds
	return out
}
