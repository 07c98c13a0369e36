package main

import (
	"strings"
	"testing"
)

// TestCandidateKeepers checks the sets' keep rules, which the bench applies itself (to count
// what each set keeps) and hands Prometheus as metric_relabel_configs.
func TestCandidateKeepers(t *testing.T) {
	const body = `# HELP lease_held Whether...
# TYPE lease_held gauge
lease_held{class="node-heartbeat",lease="ip-10-0-0-1",namespace="kube-node-lease"} 1
lease_held{class="leader-election",lease="controller-00000",namespace="kube-system"} 1
lease_info{class="leader-election",holder="a\"b,c=d",lease="controller-00000",namespace="kube-system",preferred_holder="",strategy=""} 1
lease_info{class="node-heartbeat",holder="ip-10-0-0-1",lease="ip-10-0-0-1",namespace="kube-node-lease",preferred_holder="",strategy=""} 1
lease_observed_renew_timestamp_seconds{class="node-heartbeat",lease="ip-10-0-0-1",namespace="kube-node-lease"} 1.7e+09
lease_renew_age_seconds{class="node-heartbeat",lease="ip-10-0-0-1",namespace="kube-node-lease"} 3.2
lease_renew_timestamp_seconds{class="leader-election",lease="controller-00000",namespace="kube-system"} 1.7e+09
lease_renew_timestamp_seconds{class="node-heartbeat",lease="ip-10-0-0-1",namespace="kube-node-lease"} 1.7e+09
lease_exporter_leases{class="node-heartbeat"} 1
go_goroutines 12
`
	want := map[string]int{"full": 10, "lean": 7, "lean-relabel": 7, "ksm-sim": 6, "ksm-sim-relabel": 6}
	for _, c := range candidates {
		if c.ksm {
			continue
		}
		if got := account([]byte(body), c.keeper()).Series; got != want[c.name] {
			t.Errorf("%s keeps %d series, want %d", c.name, got, want[c.name])
		}
		if c.relabel != strings.Contains(c.relabelConfigs(), "action: keep") {
			t.Errorf("%s: metric_relabel_configs %q", c.name, c.relabelConfigs())
		}
	}
	line := []byte(`lease_info{class="leader-election",holder="a\"b,c=d",lease="x",namespace="y"} 1`)
	for label, v := range map[string]string{"__name__": "lease_info", "class": "leader-election", "lease": "x", "namespace": "y", "strategy": ""} {
		if got := labelValue(line, label); got != v {
			t.Errorf("labelValue(%s) = %q, want %q", label, got, v)
		}
	}
	if got := string(seriesID([]byte("go_goroutines 12\n"))); got != "go_goroutines" {
		t.Errorf("seriesID = %q", got)
	}
}
