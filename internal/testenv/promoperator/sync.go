package promoperator

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What the operator writes for a Prometheus named N (pkg/prometheus in the operator): the
// gzipped configuration in Secret prometheus-N, and the selected PrometheusRules' rule files
// in ConfigMaps prometheus-N-rulefiles-<i>, labelled prometheus-name=N.
const (
	configKey         = "prometheus.yaml.gz"
	labelPrometheusNm = "prometheus-name"
)

// generated is one reading of what the operator wrote.
type generated struct {
	config []byte
	rules  map[string]map[string]string // ConfigMap name -> file name -> content
}

func (g generated) equal(o generated) bool {
	return bytes.Equal(g.config, o.config) && maps.EqualFunc(g.rules, o.rules, maps.Equal)
}

// readGenerated fetches the operator's output; a missing Secret is not an error yet (the
// operator has not reconciled), just no config.
func (s *Stack) readGenerated(ctx context.Context) (generated, error) {
	var g generated
	sec, err := s.kc.CoreV1().Secrets(s.opts.Namespace).Get(ctx, "prometheus-"+s.Name(), metav1.GetOptions{})
	if err != nil {
		return g, fmt.Errorf("config Secret prometheus-%s: %w", s.Name(), err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(sec.Data[configKey]))
	if err != nil {
		return g, fmt.Errorf("config Secret prometheus-%s key %s: %w", s.Name(), configKey, err)
	}
	if g.config, err = io.ReadAll(zr); err != nil {
		return g, err
	}
	cms, err := s.kc.CoreV1().ConfigMaps(s.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labelPrometheusNm + "=" + s.Name()})
	if err != nil {
		return g, err
	}
	g.rules = map[string]map[string]string{}
	for _, cm := range cms.Items {
		g.rules[cm.Name] = cm.Data
	}
	return g, nil
}

// sync does the config-reloader's job: when what the operator wrote changed, it rewrites the
// configuration for the host (Rewrite), writes it and the rule files, and has Prometheus
// reload (once it runs). It reports whether anything changed.
func (s *Stack) sync(ctx context.Context) (bool, error) {
	g, err := s.readGenerated(ctx)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	same := g.equal(s.last)
	s.mu.Unlock()
	if same {
		return false, nil
	}
	run, err := Rewrite(g.config, s.host)
	if err != nil {
		return false, err
	}
	if err := writeRules(s.host.RulesDir, g.rules); err != nil {
		return false, err
	}
	if err := writeAtomic(s.configPath(), run); err != nil {
		return false, err
	}
	if s.prometheus != nil {
		if err := reload(ctx, s.prometheus.URL); err != nil {
			return false, err
		}
	}
	s.mu.Lock()
	s.last, s.running = g, run
	s.mu.Unlock()
	return true, nil
}

// syncLoop keeps the host's files in step with the operator, as the sidecar would, until stop.
func (s *Stack) syncLoop(stop <-chan struct{}) {
	defer close(s.loopDone)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }()
	for {
		_, err := s.sync(ctx)
		s.mu.Lock()
		s.syncErr = err
		s.mu.Unlock()
		select {
		case <-stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// writeRules makes dir hold exactly the rule ConfigMaps' files, under the ConfigMap's name as
// the Pod mounts them.
func writeRules(dir string, rules map[string]map[string]string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, cm := range slices.Sorted(maps.Keys(rules)) {
		sub := filepath.Join(dir, cm)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		for name, content := range rules[cm] {
			if err := os.WriteFile(filepath.Join(sub, name), []byte(content), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeAtomic replaces path in one step, so a reload never reads half a file.
func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// reload asks Prometheus to reread its files; it answers 500 with the reason when the new
// configuration or a rule file is invalid.
func reload(ctx context.Context, promURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, promURL+"/-/reload", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reload Prometheus: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("reload Prometheus: %s: %s", resp.Status, body)
	}
	return nil
}
