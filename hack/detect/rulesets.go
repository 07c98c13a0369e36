package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lease-exporter/lease-exporter/internal/testenv/mixin"
)

// The rule sets, in the table's order. Every alert a set fires carries set=<ID>, so one
// Prometheus and one Alertmanager serve all three and the receiver tells them apart.
var ruleSets = []RuleSet{
	{ID: "lease-exporter", Title: "lease-exporter (this repository's mixin, as shipped)"},
	{ID: "self-report", Title: "Participant self-report (leader_election_master_status)"},
	{ID: "kube-state-metrics", Title: "kube-state-metrics (kube_lease_renew_time)"},
}

// otherAlerts are the alerts of this repository's rules that do not say the election is
// broken: a skewed clock, a write rate, a candidate, the exporter itself. A row that must not
// page a leadership alert may page one of them rightly (a clock 2 minutes behind is worth a
// ticket); docs/detection.md lists them, and the table shows their pages apart. Every other
// alert, and every alert of the other sets, is a leadership alert.
var otherAlerts = map[string]bool{
	"LeaseHolderClockSkew": true, "LeaseRenewStorm": true, "LeaseCandidateNotRenewing": true,
	"LeaseExporterWatchStale": true, "LeaseExporterNotSynced": true, "LeaseExporterDown": true,
	"LeaseExporterNoFreshReplica": true,
}

// selfReportRules are the alerts leader-election guides ship, written for the metric
// client-go, controller-runtime, kube-scheduler and kube-controller-manager export
// (leader_election_master_status{name}, 1 while the process leads). The guides' form is
// `sum(leader_election_is_leader) == 0` for 2m and
// `increase(leader_election_transitions_total[10m]) > 5`: client-go has no transitions
// counter, so the second counts changes of the status instead, and both are per election
// (by namespace and name) as a user with more than one would write them. docs/detection.md
// quotes them.
const selfReportRules = `groups:
- name: self-report
  rules:
  - alert: NoLeaderElected
    expr: sum by (namespace, name) (leader_election_master_status) == 0
    for: 2m
    labels: {severity: critical}
  - alert: FrequentLeaderTransitions
    expr: sum by (namespace, name) (changes(leader_election_master_status[10m])) > 5
    labels: {severity: warning}
`

// ksmRules is the staleness rule a user writes on kube-state-metrics' kube_lease_renew_time
// without knowing each Lease's duration: a Lease not renewed for a minute. Its for is the
// guides' NoLeaderElected one. docs/detection.md quotes it.
const ksmRules = `groups:
- name: kube-state-metrics
  rules:
  - alert: LeaseNotRenewed
    expr: time() - kube_lease_renew_time > 60
    for: 2m
    labels: {severity: critical}
`

// writeRuleSets writes the three sets into dir, each alert labelled with its set, and
// returns the files. Ours is the mixin rendered with its defaults, as a user installs it.
// short (-smoke) makes every `for` of the no-leader alerts 10 s, to check the harness in
// seconds rather than measure it.
func writeRuleSets(ctx context.Context, dir string, short bool) ([]string, error) {
	override, self, ksm := "{}", selfReportRules, ksmRules
	if short {
		override = "{ alerts+: { LeaseNoLeader+: { 'for': '10s' } } }"
		self, ksm = strings.ReplaceAll(self, "for: 2m", "for: 10s"), strings.ReplaceAll(ksm, "for: 2m", "for: 10s")
	}
	r, err := mixin.Render(ctx, override, filepath.Join(dir, "mixin"))
	if err != nil {
		return nil, err
	}
	ours, err := os.ReadFile(r.Alerts)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, s := range []struct {
		id   string
		yaml []byte
	}{{"lease-exporter", ours}, {"self-report", []byte(self)}, {"kube-state-metrics", []byte(ksm)}} {
		labelled, err := labelAlerts(s.yaml, s.id)
		if err != nil {
			return nil, fmt.Errorf("rule set %s: %w", s.id, err)
		}
		path := filepath.Join(dir, "rules-"+s.id+".yaml")
		if err := os.WriteFile(path, labelled, 0o644); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}

// labelAlerts adds set=<id> to every alerting rule of a Prometheus rule file.
func labelAlerts(in []byte, id string) ([]byte, error) {
	var doc struct {
		Groups []struct {
			Name     string           `yaml:"name"`
			Interval string           `yaml:"interval,omitempty"`
			Rules    []map[string]any `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(in, &doc); err != nil {
		return nil, err
	}
	alerts := 0
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			if _, ok := r["alert"]; !ok {
				continue
			}
			labels, _ := r["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
			}
			labels["set"] = id
			r["labels"] = labels
			alerts++
		}
	}
	if alerts == 0 {
		return nil, fmt.Errorf("no alerting rules")
	}
	return yaml.Marshal(doc)
}
