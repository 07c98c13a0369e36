package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// The history flags set lock.HistoryOptions: by default 4 tenures and 8 intervals for
// leader-election locks; invalid values are usage errors naming the flag.
func TestHistoryFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    lock.HistoryOptions
		wantErr string
	}{
		{nil, lock.HistoryOptions{Tenures: 4, Renewals: 8, Classes: []lock.Class{lock.ClassLeaderElection}}, ""},
		{[]string{"--history.classes=leader-election,node-heartbeat", "--history.changes=10", "--history.renewals=0"},
			lock.HistoryOptions{Tenures: 10, Classes: []lock.Class{lock.ClassLeaderElection, lock.ClassNodeHeartbeat}}, ""},
		{[]string{"--history.changes=0"}, lock.HistoryOptions{Renewals: 8, Classes: []lock.Class{lock.ClassLeaderElection}}, ""},
		{[]string{"--history.classes="}, lock.HistoryOptions{Tenures: 4, Renewals: 8}, ""},
		{[]string{"--history.classes=leader-election,bogus"}, lock.HistoryOptions{}, "--history.classes"},
		{[]string{"--history.changes=-1"}, lock.HistoryOptions{}, "--history.changes"},
		{[]string{"--history.renewals=1001"}, lock.HistoryOptions{}, "--history.renewals"},
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
		got := o.derived.informer.History
		if got.Tenures != tc.want.Tenures || got.Renewals != tc.want.Renewals || !slices.Equal(got.Classes, tc.want.Classes) {
			t.Errorf("%v: history %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// --history.deleted-retention keeps deleted locks an hour by default, none at 0; negative
// or over a day is a usage error naming the flag.
func TestDeletedRetentionFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    time.Duration
		wantErr bool
	}{
		{nil, time.Hour, false},
		{[]string{"--history.deleted-retention=0"}, 0, false},
		{[]string{"--history.deleted-retention=24h"}, 24 * time.Hour, false},
		{[]string{"--history.deleted-retention=-1s"}, 0, true},
		{[]string{"--history.deleted-retention=25h"}, 0, true},
	} {
		o, err := parseOptions(tc.args, io.Discard)
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "invalid --history.deleted-retention") || exitCode(err) != exitUsage {
				t.Errorf("%v: error %v, want a usage error naming --history.deleted-retention", tc.args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
		} else if got := o.derived.informer.History.Deleted; got != tc.want {
			t.Errorf("%v: retention %s, want %s", tc.args, got, tc.want)
		}
	}
}

// The metrics path cannot take the status pages' routes.
func TestTelemetryPathAvoidsStatusPages(t *testing.T) {
	for _, path := range []string{"/leases", "/leases/x", "/api/v1/leases"} {
		if _, err := parseOptions([]string{"--web.telemetry-path=" + path}, io.Discard); err == nil || !strings.Contains(err.Error(), "--web.telemetry-path") {
			t.Errorf("--web.telemetry-path=%s: %v, want a usage error", path, err)
		}
	}
	if _, err := parseOptions([]string{"--web.telemetry-path=/leasesx"}, io.Discard); err != nil {
		t.Errorf("--web.telemetry-path=/leasesx: %v", err)
	}
}
