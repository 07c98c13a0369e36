package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// participantOverrides renames every label of the participant join. The lock's namespace and
// the holder's hostname are set on some targets only: the others must keep namespace and pod.
const participantOverrides = `{ participantSelector: 'job="ctrl"', participantLockLabel: 'lock',
  participantNamespaceLabel: 'lock_namespace', participantPodLabel: 'participant_host' }`

// participantSuite is a promtool suite for the rendering with participantOverrides:
// kube-scheduler-node1 is a hostNetwork Pod whose hostname (node1) is the holder's; op-abc
// runs in team-b but elects in team-a; op-def in team-a has none of the override labels and
// is joined by namespace, name and pod; stray is left out by the selector.
const participantSuite = `rule_files: [alerts.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: lease_info{job="lease-exporter",instance="a",pod="le-a",namespace="kube-system",lease="kube-scheduler",class="leader-election",holder="node1_0b9a2b8e-4a7e-4c1b-9a3e-2f1d7c6b5a40"}
        values: 1x10
      - series: lease_info{job="lease-exporter",instance="a",pod="le-a",namespace="team-a",lease="op",class="leader-election",holder="op-abc_7c6b5a40-2f1d-4c1b-9a3e-0b9a2b8e4a7e"}
        values: 1x10
      - series: leader_election_master_status{job="ctrl",namespace="kube-system",pod="kube-scheduler-node1",participant_host="node1",lock="kube-scheduler"}
        values: 1x10
      - series: leader_election_master_status{job="ctrl",namespace="team-b",pod="op-abc",lock_namespace="team-a",lock="op"}
        values: 1x10
      - series: leader_election_master_status{job="ctrl",namespace="team-a",pod="op-def",name="op"}
        values: 1x10
      - series: leader_election_master_status{job="other",namespace="team-a",pod="stray",lock="op"}
        values: 1x10
      - series: lease_exporter_watch_up{job="lease-exporter",instance="a",pod="le-a"}
        values: 1x10
      - series: lease_exporter_cache_synced{job="lease-exporter",instance="a",pod="le-a"}
        values: 1x10
    promql_expr_test:
      - expr: namespace_lease_pod:leader_election_master_status:max
        eval_time: 5m
        exp_samples:
          - labels: namespace_lease_pod:leader_election_master_status:max{namespace="kube-system",lease="kube-scheduler",pod="node1"}
            value: 1
          - labels: namespace_lease_pod:leader_election_master_status:max{namespace="team-a",lease="op",pod="op-abc"}
            value: 1
          - labels: namespace_lease_pod:leader_election_master_status:max{namespace="team-a",lease="op",pod="op-def"}
            value: 1
    alert_rule_test:
      - eval_time: 5m
        alertname: LeaseLeaderDisagreement
        exp_alerts:
          - exp_labels: {severity: warning, namespace: team-a, lease: op, pod: op-def}
            exp_annotations:
              summary: Pod op-def reports leading team-a/op, but the Lease does not name it.
              description: Pod op-def has reported leader_election_master_status 1 for lock team-a/op for more than 1 minute, but the Lease names op-abc_7c6b5a40-2f1d-4c1b-9a3e-0b9a2b8e4a7e. The pod either keeps acting as leader after losing the Lease or elects on another lock than the one its namespace names.
              runbook_url: https://github.com/lease-exporter/lease-exporter/blob/main/docs/runbooks/LeaseLeaderDisagreement.md
`

// TestParticipantLabelsAreConfigurable runs participantSuite on the rendering with
// participantOverrides, and checks that the default rendering fails it: the overrides must
// be what joins these participants.
func TestParticipantLabelsAreConfigurable(t *testing.T) {
	promtool := promtoolPath(t)
	for _, c := range []struct {
		name, override string
		pass           bool
	}{{"overrides", participantOverrides, true}, {"defaults", "", false}} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "alerts.yaml"), render(t, c.override).Alerts, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "test.yml"), []byte(participantSuite), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(promtool, "test", "rules", "test.yml")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if c.pass && err != nil {
			t.Errorf("%s: promtool test rules: %v\n%s", c.name, err, out)
		}
		if !c.pass && err == nil {
			t.Errorf("%s: the suite passes without the overrides; it does not test them", c.name)
		}
	}
}
