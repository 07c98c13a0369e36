package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/collector"
	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/internal/testenv/lockobj"
	"github.com/lease-exporter/lease-exporter/lock"
)

// TestCandidateKeepers checks the sets' keep rules, which the bench applies itself (to count
// what each set keeps) and hands Prometheus as metric_relabel_configs.
func TestCandidateKeepers(t *testing.T) {
	const body = `# HELP lease_held Whether...
# TYPE lease_held gauge
lease_class_locks{class="node-heartbeat",state="lagging"} 1
lease_class_locks{class="leader-election",state="lagging"} 0
lease_held{class="node-heartbeat",lease="ip-10-0-0-1",namespace="kube-node-lease"} 1
lease_held{class="leader-election",lease="controller-00000",namespace="kube-system"} 1
lease_info{class="leader-election",holder="a\"b,c=d",lease="controller-00000",namespace="kube-system",preferred_holder="",strategy=""} 1
lease_observed_renew_timestamp_seconds{class="node-heartbeat",lease="ip-10-0-0-1",namespace="kube-node-lease"} 1.7e+09
lease_overdue_observed_renew_timestamp_seconds{class="node-heartbeat",lease="ip-10-0-0-2",namespace="kube-node-lease"} 1.7e+09
lease_exporter_leases{class="node-heartbeat"} 1
go_goroutines 12
`
	want := map[string]int{"per-lease": 9, "one-series": 6, "summary": 7, "summary-relabel": 7}
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

// TestSummarySetIsTheDefault: the summary set, cut by the proxy from what the bench's
// exporter sends (--metrics.node-heartbeats=per-lease), is line for line what the default
// exporter sends, so the bench measures the default, not an approximation of it.
func TestSummarySetIsTheDefault(t *testing.T) {
	v := view{}
	at := lockobj.T0
	for i, age := range []time.Duration{time.Second, 25 * time.Second, time.Hour} {
		l := lockobj.Lease(fmt.Sprint("n", i), "1", fmt.Sprint("node-", i), at.Add(-age))
		l.Namespace, l.Name, l.Spec.LeaseDurationSeconds = "kube-node-lease", fmt.Sprint("node-", i), ptr.To[int32](40)
		v = append(v, lock.Project(l))
	}
	for i, holder := range []string{"a", ""} {
		l := lockobj.Lease(fmt.Sprint("e", i), "1", holder, at.Add(-3*time.Second))
		l.Name = fmt.Sprint("ctrl-", i)
		v = append(v, lock.Project(l))
	}
	clock := func() time.Time { return at }
	self := prometheus.NewPedanticRegistry()
	self.MustRegister(collector.NewStatus(v, collector.Settings{Now: clock}))
	render := func(s collector.Settings) []byte {
		mfs, err := self.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		s.Now = clock
		if err := collector.NewTextWriter(v, s).Write(&b, mfs); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	perLease, def := render(collector.Settings{PerLeaseNodeHeartbeats: true}), render(collector.Settings{})
	set, err := parseSets("summary")
	if err != nil {
		t.Fatal(err)
	}
	keep := set[0].keeper()
	var cut bytes.Buffer
	for line := range bytes.Lines(perLease) {
		if line[0] == '#' || keep(line) {
			cut.Write(line)
		}
	}
	samples := func(b []byte) string { // HELP and TYPE of a family left empty differ, not what Prometheus stores
		var out []string
		for line := range bytes.Lines(b) {
			if line[0] != '#' {
				out = append(out, string(line))
			}
		}
		return strings.Join(out, "")
	}
	if got, want := samples(cut.Bytes()), samples(def); got != want {
		t.Errorf("the summary set cut from the per-lease exposition:\n%s\nthe default exposition:\n%s", got, want)
	}
	if !bytes.Contains(def, []byte(`lease_overdue_observed_renew_timestamp_seconds{class="node-heartbeat",kind="Lease",lease="node-1"`)) ||
		bytes.Contains(def, []byte(`lease_held{class="node-heartbeat"`)) {
		t.Errorf("the default exposition is not the summary the test means to compare:\n%s", def)
	}
}

// view is a synced, current informer.View over fixed locks.
type view []*lock.Lease

func (v view) HasSynced() bool { return true }
func (v view) Range(fn func(*lock.Lease)) {
	for _, l := range v {
		fn(l)
	}
}
func (v view) JudgedAt(now time.Time) time.Time { return now }

// Snapshot and Scan make it an informer.Ordered, sorted at each walk.
func (v view) Snapshot(nodes func(*lock.Lease) bool) informer.Snapshot {
	return fake.Snapshot(v, nodes)
}
func (v view) Scan(fn func([]*lock.Lease)) { fake.Scan(v, fn) }
