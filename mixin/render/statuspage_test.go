package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// statusPageOverride is a multi-cluster fleet whose clusters each serve their exporter's
// status pages under their own host.
const statusPageOverride = `{ showMultiCluster: true, statusPageURL: 'https://leases.{{ $labels.cluster }}.example.com/' }`

// statusPageSuite: LeaseNoLeader in cluster b links to b's exporter's page of the lock.
const statusPageSuite = `rule_files: [alerts.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: lease_held{cluster="b",job="lease-exporter",instance="a",pod="le-a",namespace="orders",lease="worker",kind="Lease",class="leader-election"}
        values: 0x10
      - series: lease_exporter_watch_up{cluster="b",job="lease-exporter",instance="a",pod="le-a"}
        values: 1x10
      - series: lease_exporter_cache_synced{cluster="b",job="lease-exporter",instance="a",pod="le-a"}
        values: 1x10
    alert_rule_test:
      - eval_time: 5m
        alertname: LeaseNoLeader
        exp_alerts:
          - exp_labels: {severity: critical, cluster: b, namespace: orders, lease: worker, kind: Lease, class: leader-election, job: lease-exporter}
            exp_annotations:
              summary: Leader-election Lease orders/worker has no leader.
              description: 'Lease orders/worker has had no valid holder (holder released or lease expired) for longer than the alert''s grace period; last holder: none seen in the last hour. Whatever elects through this Lease is not doing its leader-only work.'
              runbook_url: https://github.com/lease-exporter/lease-exporter/blob/main/docs/runbooks/LeaseNoLeader.md
              status_page: https://leases.b.example.com/leases/orders/worker?kind=Lease
`

// With statusPageURL set, every per-lease alert and no exporter alert links to a status
// page, the link expands to the lock's page in Prometheus, and the lease-detail dashboard
// links to the page of the lock it shows; unset, nothing links (the shipped files).
func TestStatusPageLinks(t *testing.T) {
	r := render(t, statusPageOverride)
	var rf RuleFile
	if err := yaml.Unmarshal(r.Alerts, &rf); err != nil {
		t.Fatal(err)
	}
	for _, g := range rf.Groups {
		for _, rule := range g.Rules {
			if rule.Alert == "" {
				continue
			}
			link, has := rule.Annotations["status_page"]
			if perLease := g.Name == "lease-exporter.leases"; perLease != has {
				t.Errorf("%s (group %s): status_page %q", rule.Alert, g.Name, link)
			}
		}
	}
	var d struct{ Links []struct{ Title, URL string } }
	if err := json.Unmarshal(r.Dashboards["lease-detail.json"], &d); err != nil {
		t.Fatal(err)
	}
	if l := d.Links[len(d.Links)-1]; l.Title != "Status page" || l.URL != "https://leases.${cluster}.example.com/leases/${namespace}/${lease}" {
		t.Errorf("lease-detail's last link %+v, want the status page of ${namespace}/${lease} on ${cluster}'s exporter", l)
	}
	for _, s := range [][]byte{render(t, "").Alerts, render(t, "").Dashboards["lease-detail.json"]} {
		if strings.Contains(string(s), "status_page") || strings.Contains(string(s), "Status page") {
			t.Errorf("the default rendering links to a status page it has no URL for")
		}
	}

	promtool := promtoolPath(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "alerts.yaml"), r.Alerts, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test.yml"), []byte(statusPageSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", "test.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}
