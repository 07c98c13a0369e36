package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/lease-exporter/lease-exporter/lock"
)

// Without --events nothing is written; with it, leader-election locks only, at 0.5/s with a
// burst of 25, electing the writer in the Pod's namespace (a sharded exporter per shard), and
// the history rebuilt from the Events unless --events.rebuild=false; invalid values are usage
// errors naming the flag.
func TestEventsFlags(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "monitoring")
	for _, tc := range []struct {
		args              []string
		classes           []lock.Class
		qps               float64
		burst             int
		namespace, name   string
		wantErr, wantNone string
		noRebuild         bool
	}{
		{args: nil, wantNone: "no --events"},
		{args: []string{"--events.classes=bogus"}, wantErr: "--events.classes"},
		{args: []string{"--events"}, classes: []lock.Class{lock.ClassLeaderElection}, qps: 0.5, burst: 25, namespace: "monitoring", name: "lease-exporter-events"},
		{args: []string{"--events", "--events.classes=leader-election,node-heartbeat", "--events.qps=2", "--events.burst=5", "--events.lock=obs/writer"},
			classes: []lock.Class{lock.ClassLeaderElection, lock.ClassNodeHeartbeat}, qps: 2, burst: 5, namespace: "obs", name: "writer"},
		{args: []string{"--events", "--shard=1", "--total-shards=3"}, classes: []lock.Class{lock.ClassLeaderElection}, qps: 0.5, burst: 25,
			namespace: "monitoring", name: "lease-exporter-events-shard-1"},
		{args: []string{"--events", "--events.rebuild=false"}, classes: []lock.Class{lock.ClassLeaderElection}, qps: 0.5, burst: 25,
			namespace: "monitoring", name: "lease-exporter-events", noRebuild: true},
		{args: []string{"--events", "--events.rebuild=maybe"}, wantErr: "events.rebuild"},
		{args: []string{"--events", "--events.lock=writer"}, wantErr: "--events.lock"},
		{args: []string{"--events", "--events.lock=Obs/writer"}, wantErr: "--events.lock"},
		{args: []string{"--events", "--events.qps=0"}, wantErr: "--events.qps"},
		{args: []string{"--events", "--events.burst=0"}, wantErr: "--events.burst"},
	} {
		o, err := parseOptions(tc.args, io.Discard)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || exitCode(err) != exitUsage {
				t.Errorf("%v: error %v, want a usage error naming %s", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		got := o.derived.events
		if tc.wantNone != "" {
			if got != nil {
				t.Errorf("%v: events %+v, want none", tc.args, got)
			}
			continue
		}
		if got == nil || !slices.Equal(got.Classes, tc.classes) || got.QPS != tc.qps || got.Burst != tc.burst ||
			got.Namespace != tc.namespace || got.Name != tc.name || !strings.Contains(got.Identity, "_") || got.Rebuild == tc.noRebuild {
			t.Errorf("%v: events %+v, want classes %v, %g/s burst %d, election %s/%s, rebuild %v", tc.args, got, tc.classes, tc.qps, tc.burst, tc.namespace, tc.name, !tc.noRebuild)
		}
	}
}
