package main

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/lease-exporter/lease-exporter/informer"
)

// TestWatchFlagsValidate: the flags that say what the informer watches are validated once,
// here, in the flags' words (the informer trusts its Options); every invalid combination is
// a usage error, every valid one reaches informer.Options.
func TestWatchFlagsValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // substring of the error, "" for valid
	}{
		{nil, ""},
		{[]string{"--total-shards=1"}, ""},
		{[]string{"--namespaces=Bad_NS"}, `invalid namespace "Bad_NS"`},
		{[]string{"--namespaces-exclude=Bad_NS"}, `invalid namespace "Bad_NS"`},
		{[]string{"--lease-selector=a in (b"}, `invalid --lease-selector "a in (b"`},
		{[]string{"--namespaces=a", "--namespaces-exclude=b"}, "cannot be combined"},
		{[]string{"--shard=2", "--total-shards=2"}, "invalid sharding --shard=2 --total-shards=2: need 0 <= shard < total-shards"},
		{[]string{"--shard=1", "--total-shards=0"}, "invalid sharding"},
		{[]string{"--total-shards=-1"}, "invalid sharding"},
		{[]string{"--kube.watch-batch-interval=-1s"}, "invalid --kube.watch-batch-interval -1s"},
		{[]string{"--kube.watch-batch-interval=1m"}, "invalid --kube.watch-batch-interval 1m0s"},
		{[]string{"--history.changes=-1"}, "invalid --history.changes=-1"},
		{[]string{"--history.changes=" + strconv.Itoa(informer.MaxHistory+1)}, "each must be between 0 and 1000"},
		{[]string{"--history.changes=8", "--history.renewals=0"}, ""},
	} {
		o, err := parseOptions(tc.args, io.Discard)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != exitUsage) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
		if err == nil && o.Validate() != nil {
			t.Errorf("%v: Validate is not repeatable", tc.args)
		}
	}
}

// TestValidateChangesNothing: Validate has no side effects; informerOptions derives the
// informer's options from the flags.
func TestValidateChangesNothing(t *testing.T) {
	o, err := parseOptions([]string{"--namespaces=a,b", "--locks=configmaps", "--lease-candidates=false", "--history.classes=node-heartbeat"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	before := *o
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.watch.Namespaces != nil || o.watch.Locks != nil || o.watch.NoCandidates || o.namespaces != before.namespaces {
		t.Errorf("Validate changed the options: %+v", o.watch)
	}
	w := o.informerOptions()
	if strings.Join(w.Namespaces, ",") != "a,b" || len(w.Locks) != 1 || w.Locks[0] != informer.KindConfigMap || !w.NoCandidates ||
		len(w.History.Classes) != 1 || w.History.Classes[0] != informer.ClassNodeHeartbeat {
		t.Errorf("informerOptions = %+v", w)
	}
}
