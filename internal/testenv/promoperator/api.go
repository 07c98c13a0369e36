package promoperator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
)

// ServiceMonitorJob is the job_name (and scrape pool) the operator generates for endpoint i of
// ServiceMonitor namespace/name. The series' job label is another thing: the ServiceMonitor's
// jobLabel (or the Service's name).
func ServiceMonitorJob(namespace, name string, i int) string {
	return fmt.Sprintf("serviceMonitor/%s/%s/%d", namespace, name, i)
}

// Rule is one loaded rule, as /api/v1/rules reports it.
type Rule struct {
	Group  string            `json:"-"`
	File   string            `json:"-"`
	Name   string            `json:"name"`
	Type   string            `json:"type"` // "alerting" or "recording"
	Health string            `json:"health"`
	State  string            `json:"state"` // alerting rules: inactive, pending, firing
	Labels map[string]string `json:"labels"`
}

// Rules lists every rule Prometheus has loaded.
func (s *Stack) Rules(ctx context.Context) ([]Rule, error) {
	var data struct {
		Groups []struct {
			Name  string `json:"name"`
			File  string `json:"file"`
			Rules []Rule `json:"rules"`
		} `json:"groups"`
	}
	if err := s.get(ctx, "/api/v1/rules", &data); err != nil {
		return nil, err
	}
	var out []Rule
	for _, g := range data.Groups {
		for _, r := range g.Rules {
			r.Group, r.File = g.Name, g.File
			out = append(out, r)
		}
	}
	return out, nil
}

// Target is one active scrape target, as /api/v1/targets reports it.
type Target struct {
	ScrapePool       string            `json:"scrapePool"`
	ScrapeURL        string            `json:"scrapeUrl"`
	Health           string            `json:"health"` // "up", "down" or "unknown"
	LastError        string            `json:"lastError"`
	Labels           map[string]string `json:"labels"`
	DiscoveredLabels map[string]string `json:"discoveredLabels"`
}

// Targets lists the active targets.
func (s *Stack) Targets(ctx context.Context) ([]Target, error) {
	var data struct {
		Active []Target `json:"activeTargets"`
	}
	err := s.get(ctx, "/api/v1/targets?state=active", &data)
	return data.Active, err
}

// WaitTargetUp waits until a target of scrapePool (e.g. ServiceMonitorJob(...)) was scraped
// successfully, and returns it.
func (s *Stack) WaitTargetUp(ctx context.Context, scrapePool string, timeout time.Duration) (Target, error) {
	var last []Target
	err := s.poll(ctx, timeout, func() (bool, error) {
		ts, err := s.Targets(ctx)
		last = ts
		i := slices.IndexFunc(ts, func(t Target) bool { return t.ScrapePool == scrapePool && t.Health == "up" })
		return i >= 0, err
	})
	if err != nil {
		return Target{}, fmt.Errorf("no target of %s up: %w; active targets: %+v", scrapePool, err, last)
	}
	return last[slices.IndexFunc(last, func(t Target) bool { return t.ScrapePool == scrapePool && t.Health == "up" })], nil
}

// LoadedConfig is the configuration Prometheus runs, as it reports it (/api/v1/status/config).
func (s *Stack) LoadedConfig(ctx context.Context) (map[string]any, error) {
	var data struct {
		YAML string `json:"yaml"`
	}
	if err := s.get(ctx, "/api/v1/status/config", &data); err != nil {
		return nil, err
	}
	var cfg map[string]any
	return cfg, yaml.Unmarshal([]byte(data.YAML), &cfg)
}

// WaitScrapeJob waits until Prometheus runs a scrape config named job (the operator has
// reconciled the ServiceMonitor and Prometheus reloaded), and returns it as Prometheus reports
// it.
func (s *Stack) WaitScrapeJob(ctx context.Context, job string, timeout time.Duration) (map[string]any, error) {
	var found map[string]any
	err := s.poll(ctx, timeout, func() (bool, error) {
		cfg, err := s.LoadedConfig(ctx)
		found = ScrapeConfig(cfg, job)
		return found != nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("Prometheus runs no job %s: %w", job, err)
	}
	return found, nil
}

// ScrapeConfig is the scrape config named job in a parsed configuration, or nil.
func ScrapeConfig(cfg map[string]any, job string) map[string]any {
	for _, sc := range list(cfg["scrape_configs"]) {
		if m, ok := sc.(map[string]any); ok && m["job_name"] == job {
			return m
		}
	}
	return nil
}

// WaitRules waits until Prometheus has loaded alerting rules with all the given names.
func (s *Stack) WaitRules(ctx context.Context, timeout time.Duration, names ...string) ([]Rule, error) {
	var rules []Rule
	err := s.poll(ctx, timeout, func() (bool, error) {
		var err error
		rules, err = s.Rules(ctx)
		for _, n := range names {
			if !slices.ContainsFunc(rules, func(r Rule) bool { return r.Name == n && r.Type == "alerting" }) {
				return false, err
			}
		}
		return true, err
	})
	if err != nil {
		return rules, fmt.Errorf("alerting rules %v not all loaded: %w", names, err)
	}
	return rules, nil
}

// Query runs an instant PromQL query and returns the raw "data.result".
func (s *Stack) Query(expr string) (json.RawMessage, error) {
	return promstack.Query(s.PrometheusURL(), expr)
}

// poll calls check every half second until it reports done, ctx ends or timeout passes. The
// error says why it gave up: check's last error, and the sync loop's, if any.
func (s *Stack) poll(ctx context.Context, timeout time.Duration, check func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		done, err := check()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s (last error: %v; sync: %v)", timeout, err, s.SyncError())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// get decodes a Prometheus API answer's data into out.
func (s *Stack) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.PrometheusURL()+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("GET %s: %s: %w: %.300s", path, resp.Status, err, body)
	}
	if r.Status != "success" {
		return fmt.Errorf("GET %s: %s", path, r.Error)
	}
	return json.Unmarshal(r.Data, out)
}

// Alertmanagers are the URLs Prometheus sends alerts to (/api/v1/alertmanagers, active).
func (s *Stack) Alertmanagers(ctx context.Context) ([]string, error) {
	var data struct {
		Active []struct {
			URL string `json:"url"`
		} `json:"activeAlertmanagers"`
	}
	if err := s.get(ctx, "/api/v1/alertmanagers", &data); err != nil {
		return nil, err
	}
	var out []string
	for _, a := range data.Active {
		out = append(out, a.URL)
	}
	return out, nil
}
