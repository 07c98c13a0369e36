package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lease-exporter/lease-exporter/lock"
)

// TestBadInput runs the command as a user would and checks the exit code and message.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	malformed := filepath.Join(dir, "malformed")
	if err := os.WriteFile(malformed, []byte("this: [is not a kubeconfig"), 0o600); err != nil {
		t.Fatal(err)
	}
	valid := filepath.Join(dir, "valid")
	if err := os.WriteFile(valid, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: secret-token-123}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	badWeb := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(badWeb, []byte("basic_auth_users:\n  admin: plaintext\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"--nope"}, exitUsage, "flag provided but not defined: -nope"},
		{"stray argument", []string{"extra"}, exitUsage, `unexpected argument "extra"`},
		{"invalid selector", []string{"--lease-selector", "a in (b"}, exitUsage, "invalid --lease-selector"},
		{"invalid namespace", []string{"--namespaces", "Bad_NS"}, exitUsage, `invalid namespace "Bad_NS"`},
		{"namespaces and exclusions", []string{"--namespaces", "a", "--namespaces-exclude", "b"}, exitUsage, "--namespaces and --namespaces-exclude cannot be combined"},
		{"unknown lock kind", []string{"--locks", "leases,configmap"}, exitUsage, `invalid --locks "leases,configmap": unknown lock kind "configmap": use leases, configmaps or endpoints`},
		{"no lock kind", []string{"--locks", ","}, exitUsage, `invalid --locks ",": name at least one of leases, configmaps or endpoints`},
		{"unknown node-heartbeat mode", []string{"--metrics.node-heartbeats", "perlease"}, exitUsage, `invalid --metrics.node-heartbeats "perlease": use summary (the default: counts, and a series per overdue node) or per-lease (two series per node)`},
		{"unknown lock kind in a repeated --locks", []string{"--locks", "leases,configmaps", "--locks", "secrets"}, exitUsage, `unknown lock kind "secrets"`},
		{"expect without a name", []string{"--expect", "kube-system"}, exitUsage, `invalid --expect "kube-system": want namespace/name or namespace/name/kind (kind: leases, configmaps or endpoints)`},
		{"expect with a bad namespace", []string{"--expect", "Kube_System/kube-scheduler"}, exitUsage, `invalid --expect "Kube_System/kube-scheduler": namespace "Kube_System"`},
		{"expect an unknown kind", []string{"--expect", "a/b/secrets"}, exitUsage, `invalid --expect "a/b/secrets": unknown lock kind "secrets": use leases, configmaps or endpoints`},
		{"expect a kind not watched", []string{"--expect", "a/b/configmaps"}, exitUsage, `invalid --expect "a/b/configmaps": configmaps locks are not watched: add --locks=leases,configmaps`},
		{"expect outside --namespaces", []string{"--namespaces", "a", "--expect", "b/lock"}, exitUsage, `invalid --expect "b/lock": namespace b is not in --namespaces`},
		{"expect in --namespaces-exclude", []string{"--namespaces-exclude", "b", "--expect", "b/lock"}, exitUsage, `invalid --expect "b/lock": namespace b is in --namespaces-exclude`},
		{"expect twice", []string{"--expect", "a/lock,a/lock/leases"}, exitUsage, "invalid --expect: a/lock/leases is listed twice"},
		{"bad log level", []string{"--log.level", "loud"}, exitUsage, "invalid --log.level"},
		{"negative watch batch", []string{"--kube.watch-batch-interval=-1s"}, exitUsage, "invalid --kube.watch-batch-interval -1s: must be between 0 and 5s"},
		{"long watch batch", []string{"--kube.watch-batch-interval=1m"}, exitUsage, "invalid --kube.watch-batch-interval 1m0s"},
		{"bad shard", []string{"--shard", "3", "--total-shards", "2"}, exitUsage, "invalid sharding"},
		{"bad web config", []string{"--web.config.file", badWeb}, exitUsage, "invalid --web.config.file"},
		{"missing web config", []string{"--web.config.file", filepath.Join(dir, "absent.yml")}, exitUsage, "invalid --web.config.file"},
		{"missing kubeconfig", []string{"--kubeconfig", filepath.Join(dir, "absent")}, exitKubeConfig, "absent"},
		{"malformed kubeconfig", []string{"--kubeconfig", malformed}, exitKubeConfig, "load Kubernetes client config from kubeconfig " + malformed},
		{"unknown context", []string{"--kubeconfig", valid, "--kube.context", "other"}, exitKubeConfig, "(context other): context"},
		{"unknown context, old flag spelling", []string{"--kubeconfig", valid, "--kube-context", "other"}, exitKubeConfig, "(context other): context"},
		{"unreachable server", []string{"--kubeconfig", valid, "--kube.reach-timeout=1s", "--web.listen-address=127.0.0.1:0"}, exitUnreachable, "API server https://127.0.0.1:1 not reachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := realMain(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr does not contain %q:\n%s", tc.want, stderr.String())
			}
			if strings.Contains(stderr.String(), "secret-token-123") {
				t.Errorf("stderr leaks the bearer token:\n%s", stderr.String())
			}
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := realMain([]string{"--version"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "lease-exporter, version") {
		t.Fatalf("--version: code %d, stdout %q", code, stdout.String())
	}
	stdout.Reset()
	if code := realMain([]string{"--help"}, &stdout, &stderr); code != exitOK || !strings.Contains(stderr.String(), "-web.listen-address") {
		t.Fatalf("--help: code %d, stderr %q", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "-kube-context") || !strings.Contains(stderr.String(), "-kube.context") {
		t.Errorf("--help must list --kube.context and hide its old spelling --kube-context:\n%s", stderr.String())
	}
}

// TestLocksFlag: --locks defaults to Leases, takes a comma-separated list in any case (as
// kubectl lease's --locks does), and repeated uses add up, each kind once (each deploy
// component appends its own).
func TestLocksFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []lock.Kind
	}{
		{nil, []lock.Kind{lock.KindLease}},
		{[]string{"--locks=configmaps"}, []lock.Kind{lock.KindConfigMap}},
		{[]string{"--locks", "leases, endpoints,configmaps"}, []lock.Kind{lock.KindLease, lock.KindEndpoints, lock.KindConfigMap}},
		{[]string{"--locks=leases,configmaps", "--locks=leases,endpoints"},
			[]lock.Kind{lock.KindLease, lock.KindConfigMap, lock.KindEndpoints}},
		{[]string{"--locks", "Leases,ConfigMaps"}, []lock.Kind{lock.KindLease, lock.KindConfigMap}},
	} {
		opts, err := parseOptions(tc.args, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if !slices.Equal(opts.derived.informer.Locks, tc.want) {
			t.Errorf("%v: locks %v, want %v", tc.args, opts.derived.informer.Locks, tc.want)
		}
	}
}

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
		{[]string{"--history.changes=" + strconv.Itoa(lock.MaxHistory+1)}, "each must be between 0 and 1000"},
		{[]string{"--history.changes=8", "--history.renewals=0"}, ""},
		{[]string{"--web.grafana-url=https://example.com/grafana"}, ""},
		{[]string{"--web.external-url=https://example.com/lease-exporter/"}, ""},
		{[]string{"--web.external-url=/lease-exporter"}, `invalid --web.external-url "/lease-exporter": want the absolute http(s) URL`},
		{[]string{"--web.external-url=https://example.com/api"}, "its path /api would hide the exporter's own route /api/"},
		{[]string{"--web.external-url=https://example.com/leases"}, "would hide the exporter's own route /leases"},
		{[]string{"--web.grafana-url=grafana.example.com"}, `invalid --web.grafana-url "grafana.example.com": want Grafana's absolute http(s) URL`},
		{[]string{"--web.grafana-url=https://g.example.com/?var-cluster=prod"}, ""},
		{[]string{"--web.grafana-url=https://g.example.com/#top"}, `invalid --web.grafana-url "https://g.example.com/#top"`},
	} {
		o, err := parseOptions(tc.args, io.Discard)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != exitUsage) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
		if err == nil {
			if _, err := o.Validate(); err != nil {
				t.Errorf("%v: Validate is not repeatable", tc.args)
			}
		}
	}
}

// TestValidateChangesNothing: Validate has no side effects; it returns the informer's options
// it derives from the flags.
func TestValidateChangesNothing(t *testing.T) {
	o, err := parseOptions([]string{"--namespaces=a,b", "--locks=configmaps", "--lease-candidates=false", "--history.classes=node-heartbeat"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	before := *o
	d, err := o.Validate()
	if err != nil {
		t.Fatal(err)
	}
	if o.watch.Namespaces != nil || o.watch.Locks != nil || o.watch.NoCandidates || o.namespaces != before.namespaces {
		t.Errorf("Validate changed the options: %+v", o.watch)
	}
	w := d.informer
	if strings.Join(w.Namespaces, ",") != "a,b" || len(w.Locks) != 1 || w.Locks[0] != lock.KindConfigMap || !w.NoCandidates ||
		len(w.History.Classes) != 1 || w.History.Classes[0] != lock.ClassNodeHeartbeat {
		t.Errorf("informerOptions = %+v", w)
	}
}
