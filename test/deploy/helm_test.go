package deploy_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

func deploymentOf(t *testing.T, objs []object) object {
	t.Helper()
	deps := ofKind(objs, "Deployment")
	if len(deps) != 1 {
		t.Fatalf("want 1 Deployment, got %d", len(deps))
	}
	return deps[0]
}

func containerOf(t *testing.T, d object) object {
	t.Helper()
	ctrs := list(d.get("spec", "template", "spec", "containers"))
	if len(ctrs) != 1 {
		t.Fatalf("%s: want 1 container, got %d", d.key(), len(ctrs))
	}
	return object(asMap(ctrs[0]))
}

func argsOf(c object) []string {
	var out []string
	for _, a := range list(c.get("args")) {
		out = append(out, a.(string))
	}
	return out
}

// TestHelmWebConfigTLS: the Secret is mounted read-only, --web.config.file points into it,
// probes and the ServiceMonitor switch to HTTPS.
func TestHelmWebConfigTLS(t *testing.T) {
	objs := renderHelm(t, "--set", "webConfig.secretName=lease-exporter-web,webConfig.tls=true,serviceMonitor.enabled=true",
		"--set-json", `serviceMonitor.tlsConfig={"insecureSkipVerify":true}`)
	d := deploymentOf(t, objs)
	c := containerOf(t, d)
	if !slices.Contains(argsOf(c), "--web.config.file=/etc/lease-exporter/web/web-config.yml") {
		t.Errorf("args %v lack --web.config.file", argsOf(c))
	}
	wantMount := []any{map[string]any{"name": "web-config", "mountPath": "/etc/lease-exporter/web", "readOnly": true}}
	if !reflect.DeepEqual(c.get("volumeMounts"), wantMount) {
		t.Errorf("volumeMounts = %s", compact(c.get("volumeMounts")))
	}
	wantVol := []any{map[string]any{"name": "web-config", "secret": map[string]any{"secretName": "lease-exporter-web"}}}
	if !reflect.DeepEqual(d.get("spec", "template", "spec", "volumes"), wantVol) {
		t.Errorf("volumes = %s", compact(d.get("spec", "template", "spec", "volumes")))
	}
	for _, p := range []string{"livenessProbe", "readinessProbe"} {
		if c.get(p, "httpGet", "scheme") != "HTTPS" {
			t.Errorf("%s = %s, want scheme HTTPS", p, compact(c.get(p)))
		}
	}
	sm := ofKind(objs, "ServiceMonitor")[0]
	ep := object(asMap(list(sm.get("spec", "endpoints"))[0]))
	if ep.get("scheme") != "https" || ep.get("tlsConfig", "insecureSkipVerify") != true {
		t.Errorf("ServiceMonitor endpoint = %s, want scheme https with the given tlsConfig", compact(ep))
	}
	checkInvariants(t, objs, releaseNS)
}

// TestHelmWebConfigBasicAuth: the kubelet cannot authenticate, so probes fall back to TCP
// checks, unless an Authorization header is given explicitly.
func TestHelmWebConfigBasicAuth(t *testing.T) {
	c := containerOf(t, deploymentOf(t, renderHelm(t, "--set", "webConfig.secretName=web,webConfig.basicAuth=true,webConfig.tls=true")))
	for _, p := range []string{"livenessProbe", "readinessProbe"} {
		if c.get(p, "httpGet") != nil || c.get(p, "tcpSocket", "port") != "http-metrics" {
			t.Errorf("with basic auth %s = %s, want a tcpSocket probe on http-metrics", p, compact(c.get(p)))
		}
	}
	c = containerOf(t, deploymentOf(t, renderHelm(t, "--set", "webConfig.secretName=web,webConfig.basicAuth=true",
		"--set-json", `probes.httpHeaders=[{"name":"Authorization","value":"Basic cHJvYmU6cHJvYmU="}]`)))
	wantHeaders := []any{map[string]any{"name": "Authorization", "value": "Basic cHJvYmU6cHJvYmU="}}
	for p, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
		if c.get(p, "httpGet", "path") != path || c.get(p, "httpGet", "scheme") != "HTTP" || !reflect.DeepEqual(c.get(p, "httpGet", "httpHeaders"), wantHeaders) {
			t.Errorf("with probes.httpHeaders %s = %s, want HTTP GET %s with the header", p, compact(c.get(p)), path)
		}
	}
}

// TestHelmAdditionalLabels: kube-prometheus-stack selects ServiceMonitors and PrometheusRules
// by its release label.
func TestHelmAdditionalLabels(t *testing.T) {
	objs := renderHelm(t, "--set", "serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboards.enabled=true",
		"--set", "serviceMonitor.additionalLabels.release=kube-prometheus-stack,prometheusRule.additionalLabels.release=kube-prometheus-stack",
		"--set", "dashboards.namespace=grafana,dashboards.annotations.grafana_folder=Kubernetes")
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		o := ofKind(objs, kind)
		if len(o) != 1 || o[0].labels()["release"] != "kube-prometheus-stack" {
			t.Errorf("%s lacks label release=kube-prometheus-stack", kind)
		}
	}
	cms := ofKind(objs, "ConfigMap")
	if len(cms) == 0 {
		t.Fatal("no dashboard ConfigMaps")
	}
	for _, cm := range cms {
		if cm.namespace() != "grafana" || cm.get("metadata", "annotations", "grafana_folder") != "Kubernetes" {
			t.Errorf("%s: want namespace grafana and annotation grafana_folder", cm.key())
		}
	}
}

// TestHelmReleaseNameKeepsJob: whatever the release is called, Prometheus' job label stays
// "lease-exporter" (ServiceMonitor jobLabel), which the alerts select.
func TestHelmReleaseNameKeepsJob(t *testing.T) {
	root := tools.RepoRoot(t)
	out := run(t, root, tools.HelmEnv(t), tools.Helm(t), "template", "observability", root+"/"+chartDir, "--namespace", "obs",
		"--set", "serviceMonitor.enabled=true")
	objs := decodeObjects(t, out)
	svc := ofKind(objs, "Service")[0]
	sm := ofKind(objs, "ServiceMonitor")[0]
	if svc.name() != "observability-lease-exporter" {
		t.Errorf("Service name = %q", svc.name())
	}
	if job := svc.labels()[sm.get("spec", "jobLabel").(string)]; job != "lease-exporter" {
		t.Errorf("job would be %q, want lease-exporter", job)
	}
	checkInvariants(t, objs, "obs")
}

func TestHelmOptions(t *testing.T) {
	t.Run("one replica has no PodDisruptionBudget", func(t *testing.T) {
		if pdbs := ofKind(renderHelm(t, "--set", "replicaCount=1"), "PodDisruptionBudget"); len(pdbs) != 0 {
			t.Errorf("replicaCount=1 renders %d PodDisruptionBudgets; minAvailable 1 would block every drain", len(pdbs))
		}
	})
	t.Run("image digest", func(t *testing.T) {
		digest := "sha256:" + strings.Repeat("ab", 32)
		c := containerOf(t, deploymentOf(t, renderHelm(t, "--set", "image.digest="+digest)))
		if c.get("image") != exporterImage+"@"+digest {
			t.Errorf("image = %v", c.get("image"))
		}
	})
	t.Run("flags", func(t *testing.T) {
		c := containerOf(t, deploymentOf(t, renderHelm(t,
			"--set", "log.level=debug,log.format=text,web.maxRequests=3,web.enablePprof=true,web.telemetryPath=/m",
			"--set", "watch.leaseSelector=app!=test",
			"--set-json", `watch.namespacesExclude=["kube-node-lease"]`,
			"--set-json", `extraArgs=["--kube.context=x"]`)))
		want := []string{"--web.listen-address=:10047", "--log.format=text", "--log.level=debug", "--web.telemetry-path=/m",
			"--web.max-requests=3", "--web.enable-pprof", "--namespaces-exclude=kube-node-lease", "--lease-selector=app!=test", "--kube.context=x"}
		if got := argsOf(c); !slices.Equal(got, want) {
			t.Errorf("args = %v\nwant   %v", got, want)
		}
	})
	t.Run("annotation locks only when enabled", func(t *testing.T) {
		for _, tc := range []struct {
			args  []string
			locks []string
		}{
			{nil, nil},
			{[]string{"--set", "locks.configMaps=true"}, []string{"configmaps"}},
			{[]string{"--set", "locks.endpoints=true"}, []string{"endpoints"}},
			{[]string{"--set", "locks.endpoints=true,locks.configMaps=true", "--set-json", `watch.namespaces=["a","b"]`}, []string{"configmaps", "endpoints"}},
		} {
			objs := renderHelm(t, tc.args...)
			var args []string
			for _, a := range argsOf(containerOf(t, deploymentOf(t, objs))) {
				if strings.HasPrefix(a, "--locks") {
					args = append(args, a)
				}
			}
			var want []string
			for _, k := range tc.locks {
				want = append(want, "--locks=leases,"+k)
			}
			if !slices.Equal(args, want) {
				t.Errorf("%v: --locks args %v, want %v", tc.args, args, want)
			}
			wantRules := slices.Clone(leaseRule)
			for _, k := range tc.locks {
				wantRules = append(wantRules, lockRule(k))
			}
			roles := append(ofKind(objs, "ClusterRole"), ofKind(objs, "Role")...)
			for _, r := range roles {
				if !reflect.DeepEqual(r.get("rules"), wantRules) {
					t.Errorf("%v: %s rules %s, want %s", tc.args, r.key(), compact(r.get("rules")), compact(wantRules))
				}
			}
		}
	})
	t.Run("no network policy", func(t *testing.T) {
		if n := len(ofKind(renderHelm(t, "--set", "networkPolicy.enabled=false"), "NetworkPolicy")); n != 0 {
			t.Errorf("networkPolicy.enabled=false renders %d NetworkPolicies", n)
		}
	})
}

// TestHelmRejectsBadValues: the schema and the chart's checks fail early with a message.
func TestHelmRejectsBadValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "log.level=verbose"}, "log/level"},
		{[]string{"--set", "replicas=2"}, "replicas"},
		{[]string{"--set", "sharding.totalShards=0"}, "totalShards"},
		{[]string{"--set", "podAntiAffinity=maybe"}, "podAntiAffinity"},
		{[]string{"--set-json", `watch.namespaces=["a"]`, "--set-json", `watch.namespacesExclude=["b"]`}, "mutually exclusive"},
		{[]string{"--set", "webConfig.tls=true"}, "webConfig.secretName"},
		{[]string{"--set", "serviceAccount.create=false"}, "serviceAccount.name"},
		{[]string{"--set", "locks.secrets=true"}, "secrets"},
	} {
		out, err := renderHelmErr(t, c.args...)
		if err == nil {
			t.Errorf("helm template %v succeeded:\n%.300s", c.args, out)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("helm template %v failed without mentioning %q: %v", c.args, c.want, err)
		}
	}
}

// TestHelmEventsOptions: events.enabled grants the Events writer's election per shard, in the
// release namespace, under the release's name, and passes the chosen classes and bucket on,
// and --events.rebuild=false only with events.rebuild=false; disabled, nothing of it is rendered.
func TestHelmEventsOptions(t *testing.T) {
	root := tools.RepoRoot(t)
	out := run(t, root, tools.HelmEnv(t), tools.Helm(t), "template", "observability", root+"/"+chartDir, "--namespace", "obs",
		"--set", "events.enabled=true,sharding.totalShards=3,events.qps=2,events.burst=50", "--set-json", `events.classes=["leader-election","node-heartbeat"]`)
	objs := decodeObjects(t, out)
	checkInvariants(t, objs, "obs")
	for _, d := range ofKind(objs, "Deployment") {
		args := list(d.get("spec", "template", "spec", "containers", "0", "args"))
		if len(args) == 0 {
			args = list(asMap(list(d.get("spec", "template", "spec", "containers"))[0])["args"])
		}
		for _, want := range []string{"--events", "--events.lock=$(POD_NAMESPACE)/observability-lease-exporter-events", "--events.classes=leader-election,node-heartbeat",
			"--events.qps=2", "--events.burst=50"} {
			if !slices.Contains(args, any(want)) {
				t.Errorf("%s args %v lack %s", d.key(), args, want)
			}
		}
		if slices.Contains(args, any("--events.rebuild=false")) {
			t.Errorf("%s args %v turn the rebuild off by default", d.key(), args)
		}
	}
	noRebuild := decodeObjects(t, run(t, root, tools.HelmEnv(t), tools.Helm(t), "template", "observability", root+"/"+chartDir, "--namespace", "obs",
		"--set", "events.enabled=true,events.rebuild=false"))
	for _, d := range ofKind(noRebuild, "Deployment") {
		if args := list(asMap(list(d.get("spec", "template", "spec", "containers"))[0])["args"]); !slices.Contains(args, any("--events.rebuild=false")) {
			t.Errorf("events.rebuild=false: %s args %v lack --events.rebuild=false", d.key(), args)
		}
	}
	off := decodeObjects(t, run(t, root, tools.HelmEnv(t), tools.Helm(t), "template", "observability", root+"/"+chartDir, "--namespace", "obs"))
	for _, o := range off {
		if strings.Contains(compact(o), "events") && o.kind() != "ConfigMap" {
			t.Errorf("events.enabled=false renders %s mentioning events", o.key())
		}
	}
}
