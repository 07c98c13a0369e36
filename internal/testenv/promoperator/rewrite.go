package promoperator

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// The operator writes configuration for a Prometheus Pod: it mounts the config Secret and the
// rule ConfigMaps under /etc/prometheus, talks to the API server with the Pod's ServiceAccount
// (in-cluster), and lets a config-reloader sidecar fill in the Pod's environment. The host's
// Prometheus has none of that, so Rewrite changes exactly those parts, each in one function
// below, and nothing that decides what is scraped or how (jobs, relabelling, honor_labels,
// intervals); the deploy test asserts that.

// podPaths are where the Pod has the operator's files; after Rewrite nothing may point there.
var podPaths = []string{"/etc/prometheus/", "/var/run/secrets/"}

// Host is what the host process has instead of the Pod's mounts and environment.
type Host struct {
	Kubeconfig      string            // credentials for service discovery
	RulesDir        string            // holds <rule ConfigMap name>/<file>, as the Pod's RulesDir
	AlertmanagerURL string            // empty: the configuration must not alert anywhere
	PodEnv          map[string]string // what the config-reloader would substitute, e.g. POD_NAME
}

// Rewrite turns the operator's generated prometheus.yaml into the host's.
func Rewrite(generated []byte, h Host) ([]byte, error) {
	expanded, err := expandPodEnv(generated, h.PodEnv)
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(expanded, &cfg); err != nil {
		return nil, fmt.Errorf("parse generated configuration: %w", err)
	}
	if err := alertTo(cfg, h.AlertmanagerURL); err != nil {
		return nil, err
	}
	if err := useKubeconfig(cfg, h.Kubeconfig); err != nil {
		return nil, err
	}
	mountRuleFiles(cfg, h.RulesDir)
	if err := checkNoPodPaths(cfg, ""); err != nil {
		return nil, err
	}
	return yaml.Marshal(cfg)
}

var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expandPodEnv does what the config-reloader sidecar does before Prometheus reads the file:
// replace $(VAR) with the Pod's environment (the operator writes
// prometheus_replica: $(POD_NAME), and $(SHARD) in sharding rules). A reference to anything
// else is an error, not left for Prometheus to misread.
func expandPodEnv(cfg []byte, env map[string]string) ([]byte, error) {
	var missing []string
	out := envRef.ReplaceAllFunc(cfg, func(ref []byte) []byte {
		name := string(envRef.FindSubmatch(ref)[1])
		v, ok := env[name]
		if !ok {
			missing = append(missing, name)
			return ref
		}
		return []byte(v)
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("generated configuration refers to Pod environment %v, which the host run does not provide", missing)
	}
	return out, nil
}

// useKubeconfig points every Kubernetes service discovery at the test's API server with the
// test's credentials: without api_server or kubeconfig_file Prometheus uses the in-cluster
// config, which exists only inside a Pod. Configuration that already names an API server
// (the Prometheus object's apiserverConfig) is not ours to redirect.
func useKubeconfig(cfg map[string]any, kubeconfig string) error {
	for _, sd := range kubernetesSDs(cfg) {
		if sd["api_server"] != nil || sd["kubeconfig_file"] != nil {
			return fmt.Errorf("kubernetes_sd_config already names an API server: %v", sd)
		}
		sd["kubeconfig_file"] = kubeconfig
	}
	return nil
}

func kubernetesSDs(cfg map[string]any) []map[string]any {
	var out []map[string]any
	collect := func(entries []any) {
		for _, e := range entries {
			m, _ := e.(map[string]any)
			for _, sd := range list(m["kubernetes_sd_configs"]) {
				if sdm, ok := sd.(map[string]any); ok {
					out = append(out, sdm)
				}
			}
		}
	}
	collect(list(cfg["scrape_configs"]))
	if alerting, ok := cfg["alerting"].(map[string]any); ok {
		collect(list(alerting["alertmanagers"]))
	}
	return out
}

// mountRuleFiles moves rule file globs from the Pod's mount point (/etc/prometheus/rules/<rule
// ConfigMap>/) to where the host run writes the same ConfigMaps.
func mountRuleFiles(cfg map[string]any, dir string) {
	const podRulesDir = "/etc/prometheus/rules/"
	files := list(cfg["rule_files"])
	for i, f := range files {
		if s, ok := f.(string); ok && strings.HasPrefix(s, podRulesDir) {
			files[i] = filepath.Join(dir, strings.TrimPrefix(s, podRulesDir))
		}
	}
}

// alertTo sends alerts to the test's Alertmanager, a host process, where the Pod would find
// the Alertmanager Service's endpoints by service discovery (and keep them by Service name and
// port name, relabelling that has nothing to match on a static target). Everything else of
// each alertmanager entry (scheme, path prefix, API version, timeout) and the
// alert_relabel_configs stay.
func alertTo(cfg map[string]any, amURL string) error {
	alerting, _ := cfg["alerting"].(map[string]any)
	ams := list(alerting["alertmanagers"])
	if amURL == "" {
		if len(ams) > 0 {
			return fmt.Errorf("generated configuration alerts to %d Alertmanager(s), but no Alertmanager URL was given", len(ams))
		}
		return nil
	}
	if len(ams) == 0 {
		return fmt.Errorf("generated configuration has no Alertmanager to point at %s", amURL)
	}
	u, err := url.Parse(amURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("alertmanager URL %q: want scheme://host:port", amURL)
	}
	for _, a := range ams {
		am := a.(map[string]any)
		delete(am, "kubernetes_sd_configs")
		delete(am, "relabel_configs")
		am["static_configs"] = []any{map[string]any{"targets": []any{u.Host}}}
		am["scheme"] = u.Scheme
	}
	return nil
}

// checkNoPodPaths fails on any value still naming a file in the Pod (a token or CA file, a TLS
// asset), which would otherwise only show up as a failing scrape.
func checkNoPodPaths(v any, where string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if err := checkNoPodPaths(e, where+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := checkNoPodPaths(e, fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	case string:
		for _, p := range podPaths {
			if strings.HasPrefix(v, p) {
				return fmt.Errorf("configuration %s = %q is a file inside the Prometheus Pod, which the host run does not have", where, v)
			}
		}
	}
	return nil
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}
