package promoperator

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// generatedFixture is shaped like the operator's output for a Prometheus with one
// ServiceMonitor, one PrometheusRule and one Alertmanager Service.
const generatedFixture = `global:
  evaluation_interval: 30s
  scrape_interval: 30s
  external_labels:
    prometheus: monitoring/kps-prometheus
    prometheus_replica: $(POD_NAME)
rule_files:
- /etc/prometheus/rules/prometheus-kps-prometheus-rulefiles-0/*.yaml
scrape_configs:
- job_name: serviceMonitor/monitoring/lease-exporter/0
  honor_labels: true
  kubernetes_sd_configs:
  - role: endpoints
    namespaces:
      names: [monitoring]
  scrape_interval: 30s
  metrics_path: /metrics
  relabel_configs:
  - source_labels: [job]
    target_label: __tmp_prometheus_job_name
  - action: keep
    source_labels: [__meta_kubernetes_endpoint_port_name]
    regex: http-metrics
alerting:
  alert_relabel_configs:
  - action: labeldrop
    regex: prometheus_replica
  alertmanagers:
  - path_prefix: /
    scheme: http
    api_version: v2
    kubernetes_sd_configs:
    - role: endpoints
      namespaces:
        names: [monitoring]
    relabel_configs:
    - action: keep
      source_labels: [__meta_kubernetes_service_name]
      regex: kps-alertmanager
`

var fixtureHost = Host{
	Kubeconfig:      "/tmp/x/token.kubeconfig",
	RulesDir:        "/tmp/x/rules",
	AlertmanagerURL: "http://127.0.0.1:9093",
	PodEnv:          map[string]string{"POD_NAME": "prometheus-kps-prometheus-0", "SHARD": "0"},
}

func parse(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRewrite(t *testing.T) {
	out, err := Rewrite([]byte(generatedFixture), fixtureHost)
	if err != nil {
		t.Fatal(err)
	}
	got, gen := parse(t, out), parse(t, []byte(generatedFixture))
	if r := got["global"].(map[string]any)["external_labels"].(map[string]any)["prometheus_replica"]; r != "prometheus-kps-prometheus-0" {
		t.Errorf("prometheus_replica = %v, want the Pod name filled in", r)
	}
	if rf := got["rule_files"]; !reflect.DeepEqual(rf, []any{"/tmp/x/rules/prometheus-kps-prometheus-rulefiles-0/*.yaml"}) {
		t.Errorf("rule_files = %v", rf)
	}
	job, want := ScrapeConfig(got, "serviceMonitor/monitoring/lease-exporter/0"), ScrapeConfig(gen, "serviceMonitor/monitoring/lease-exporter/0")
	sd := job["kubernetes_sd_configs"].([]any)[0].(map[string]any)
	if sd["kubeconfig_file"] != fixtureHost.Kubeconfig {
		t.Errorf("service discovery %v lacks the kubeconfig", sd)
	}
	delete(sd, "kubeconfig_file")
	if !reflect.DeepEqual(job, want) {
		t.Errorf("job changed beyond kubeconfig_file:\n%v\nwant\n%v", job, want)
	}
	alerting := got["alerting"].(map[string]any)
	wantAM := map[string]any{"path_prefix": "/", "scheme": "http", "api_version": "v2",
		"static_configs": []any{map[string]any{"targets": []any{"127.0.0.1:9093"}}}}
	if am := alerting["alertmanagers"].([]any)[0]; !reflect.DeepEqual(am, wantAM) {
		t.Errorf("alertmanager = %v, want %v", am, wantAM)
	}
	if !reflect.DeepEqual(alerting["alert_relabel_configs"], gen["alerting"].(map[string]any)["alert_relabel_configs"]) {
		t.Errorf("alert_relabel_configs changed: %v", alerting["alert_relabel_configs"])
	}
}

func TestRewriteRefuses(t *testing.T) {
	noAM := fixtureHost
	noAM.AlertmanagerURL = ""
	for _, c := range []struct {
		name, cfg string
		host      Host
		want      string
	}{
		{"unknown Pod variable", strings.Replace(generatedFixture, "$(POD_NAME)", "$(NODE_NAME)", 1), fixtureHost, "NODE_NAME"},
		{"API server already set", strings.Replace(generatedFixture, "  - role: endpoints\n    namespaces:", "  - role: endpoints\n    api_server: https://k8s\n    namespaces:", 1), fixtureHost, "already names an API server"},
		{"token file in the Pod", strings.Replace(generatedFixture, "  honor_labels: true\n", "  honor_labels: true\n  bearer_token_file: /var/run/secrets/kubernetes.io/serviceaccount/token\n", 1), fixtureHost, "bearer_token_file"},
		{"alerting without an Alertmanager URL", generatedFixture, noAM, "no Alertmanager URL"},
		{"an Alertmanager URL without alerting", generatedFixture[:strings.Index(generatedFixture, "alerting:")], fixtureHost, "no Alertmanager to point at"},
	} {
		_, err := Rewrite([]byte(c.cfg), c.host)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}
