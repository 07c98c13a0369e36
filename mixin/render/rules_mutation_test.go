package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A mutant is a plausible mistake in one alert or recording rule. Every mutant must make at least one
// promtool suite fail; one that passes means the suites do not pin that behaviour.
type mutant struct {
	name, alert string // alert: the alert's name, or the recording rule's
	field       string // "expr", "for" or "description"
	old, new    string
}

var mutants = []mutant{
	{"grace shorter than a crash restart", "LeaseNoLeader", "for", "2m", "1m"},
	{"no watch guard", "LeaseNoLeader", "expr", "(lease_exporter_watch_up{job=~\".*lease-exporter.*\"} == 1 and", "(lease_exporter_watch_up{job=~\".*lease-exporter.*\"} >= 0 and"},
	{"no sync guard", "LeaseNoLeader", "expr", " lease_exporter_cache_synced{job=~\".*lease-exporter.*\"} == 1)", " lease_exporter_cache_synced{job=~\".*lease-exporter.*\"} >= 0)"},
	{"one replica's no-holder wins", "LeaseNoLeader", "expr", "max without", "min without"},
	{"one alert per replica", "LeaseNoLeader", "expr", "without (instance, pod)", "without (instance)"},
	{"every class", "LeaseNoLeader", "expr", `, class="leader-election"`, ""},
	{"exemption ignored", "LeaseNoLeader", "expr", `alert=~"|LeaseNoLeader"`, `alert="never"`},
	{"current instead of last holder", "LeaseNoLeader", "description", `holder!=""`, `holder=~".*"`},
	{"a stalled coordinated election not named", "LeaseNoLeader", "description", "unless on (candidate)", "and on (candidate)"},
	{"missing pages at once", "LeaseMissing", "for", "5m", "4m"},
	{"no watch guard", "LeaseMissing", "expr", "(lease_exporter_watch_up{job=~\".*lease-exporter.*\"} == 1 and", "(lease_exporter_watch_up{job=~\".*lease-exporter.*\"} >= 0 and"},
	{"no sync guard", "LeaseMissing", "expr", " lease_exporter_cache_synced{job=~\".*lease-exporter.*\"} == 1)", " lease_exporter_cache_synced{job=~\".*lease-exporter.*\"} >= 0)"},
	{"a lagging replica's zero wins", "LeaseMissing", "expr", "max without", "min without"},
	{"one alert per replica", "LeaseMissing", "expr", "without (instance, pod)", "without (instance)"},
	{"current instead of last holder", "LeaseMissing", "description", `holder!=""`, `holder=~".*"`},
	{"threshold past expiry", "LeaseRenewalLagging", "expr", "> 0.5", "> 0.9"},
	{"fires when not held", "LeaseRenewalLagging", "expr", "(lease_held{job=~\".*lease-exporter.*\"} == 1)", "(lease_held{job=~\".*lease-exporter.*\"} >= 0)"},
	{"frozen data counts", "LeaseRenewalLagging", "expr", "(lease_exporter_watch_up{job=~\".*lease-exporter.*\"} == 1 and", "(lease_exporter_watch_up{job=~\".*lease-exporter.*\"} >= 0 and"},
	{"lagging replica wins", "LeaseRenewalLagging", "expr", "min without", "max without"},
	{"age at evaluation, not at the scrape", "LeaseRenewalLagging", "expr",
		`timestamp(lease_observed_renew_timestamp_seconds{job=~".*lease-exporter.*"})`, "time()"},
	{"replicas summed", "LeaseFrequentTransitions", "expr", "max without", "sum without"},
	{"delta misses post-reset changes", "LeaseFrequentTransitions", "expr", "increase(", "delta("},
	{"range counts the reset", "LeaseFrequentTransitions", "expr",
		`increase(lease_observed_holder_changes_total{job=~".*lease-exporter.*"}[10m])`,
		`(max_over_time(lease_observed_holder_changes_total{job=~".*lease-exporter.*"}[10m]) - min_over_time(lease_observed_holder_changes_total{job=~".*lease-exporter.*"}[10m]))`},
	{"spec counter misses electors that never write it", "LeaseFrequentTransitions", "expr", "lease_observed_holder_changes_total", "lease_transitions_total"},
	{"more than 6", "LeaseFrequentTransitions", "expr", ">= 6", ">= 7"},
	{"extrapolation-blind threshold", "LeaseFrequentTransitions", "expr", ">= 6", "> 4"},
	{"exemption ignored", "LeaseFrequentTransitions", "expr", `alert=~"|LeaseFrequentTransitions"`, `alert="never"`},
	{"one replica's fast clock pages (ahead)", "LeaseHolderClockSkew", "expr", "min without", "max without"},
	{"one replica's slow clock pages (behind)", "LeaseHolderClockSkew", "expr", "max without", "min without"},
	{"frozen skew counts", "LeaseHolderClockSkew", "expr", "(lease_exporter_watch_up{job=~\".*lease-exporter.*\"} == 1 and", "(lease_exporter_watch_up{job=~\".*lease-exporter.*\"} >= 0 and"},
	{"no sync guard", "LeaseHolderClockSkew", "expr", " lease_exporter_cache_synced{job=~\".*lease-exporter.*\"} == 1)", " lease_exporter_cache_synced{job=~\".*lease-exporter.*\"} >= 0)"},
	{"a dead holder's last skew counts", "LeaseHolderClockSkew", "expr", "(lease_held{job=~\".*lease-exporter.*\"} == 1)", "(lease_held{job=~\".*lease-exporter.*\"} >= 0)"},
	{"fixed threshold", "LeaseHolderClockSkew", "expr", "clamp(0.25 * max without", "clamp(0 * max without"},
	{"a stale replica's duration sets the tolerance", "LeaseHolderClockSkew", "expr",
		"lease_duration_seconds{job=~\".*lease-exporter.*\"}\n          and on (job, instance)\n            (lease_exporter_watch_up{job=~\".*lease-exporter.*\"} == 1 and",
		"lease_duration_seconds{job=~\".*lease-exporter.*\"}\n          and on (job, instance)\n            (lease_exporter_watch_up{job=~\".*lease-exporter.*\"} >= 0 and"},
	{"no floor under watch latency", "LeaseHolderClockSkew", "expr", ", 2, 30)", ", 0, 30)"},
	{"no cap for hour-long leases", "LeaseHolderClockSkew", "expr", ", 2, 30)", ", 2, 3600)"},
	{"spikes page", "LeaseHolderClockSkew", "for", "5m", "1m"},
	{"exemption ignored", "LeaseHolderClockSkew", "expr", `alert=~"|LeaseHolderClockSkew"`, `alert="never"`},
	{"pages when nobody holds the Lease", "LeasePreferredHolderNotLeading", "expr", "(lease_held{job=~\".*lease-exporter.*\"} == 1)", "(lease_held{job=~\".*lease-exporter.*\"} >= 0)"},
	{"quick handovers page", "LeasePreferredHolderNotLeading", "for", "5m", "2m"},
	{"a lagging replica's zero wins", "LeaseCoordinatedNoFreshCandidate", "expr", "max without", "min without"},
	{"a returning candidate pages", "LeaseCoordinatedNoFreshCandidate", "for", "5m", "2m"},
	{"every stale candidate of the Lease pages", "LeaseCandidateNotRenewing", "expr", "and on (namespace, lease, candidate)", "and on (namespace, lease)"},
	{"holder not checked", "LeaseCandidateNotRenewing", "expr", `lease_info{job=~".*lease-exporter.*", holder!=""}`, `lease_info{job=~".*lease-exporter.*", holder="never"}`},
	{"a frozen Lease names the candidate", "LeaseCandidateNotRenewing", "expr",
		"preferred_holder!=\"\"}\n            and on (job, instance)\n              (lease_exporter_watch_up{job=~\".*lease-exporter.*\"} == 1 and",
		"preferred_holder!=\"\"}\n            and on (job, instance)\n              (lease_exporter_watch_up{job=~\".*lease-exporter.*\"} >= 0 and"},
	{"one renewal interval only", "LeaseCandidateNotRenewing", "expr", "> 600", "> 1200"},
	{"replicas summed", "LeaseRenewStorm", "expr", "max without", "sum without"},
	{"threshold past a 100 ms retry period", "LeaseRenewStorm", "expr", ") > 1\n", ") > 10.5\n"},
	{"a restart's burst pages", "LeaseRenewStorm", "for", "10m", "5m"},
	{"exemption ignored", "LeaseRenewStorm", "expr", `alert=~"|LeaseRenewStorm"`, `alert="never"`},
	{"exemption ignored", "LeaseCandidateNotRenewing", "expr", `alert=~"|LeaseCandidateNotRenewing"`, `alert="never"`},
	{"namespaces merged", "LeaseSplitBrain", "expr", "count by (namespace, lease)", "count by (lease)"},
	{"one leader pages", "LeaseSplitBrain", "expr", ") > 1", ") > 0"},
	{"a stale sample after a handover pages", "LeaseSplitBrain", "for", "1m", "15s"},
	{"exemption ignored", "LeaseSplitBrain", "expr", `alert=~"|LeaseSplitBrain"`, `alert="never"`},
	{"any holder of the lock will do", "LeaseLeaderDisagreement", "expr", "unless on (namespace, lease, pod)", "unless on (namespace, lease)"},
	{"a stale sample after a handover pages", "LeaseLeaderDisagreement", "for", "1m", "15s"},
	{"static Pods not recognised", "LeaseLeaderDisagreement", "expr", `label_join(namespace_lease_pod:lease_info:relabel, "pod", "-", "lease", "pod")`, "namespace_lease_pod:lease_info:relabel"},
	{"exemption ignored", "LeaseLeaderDisagreement", "expr", `alert=~"|LeaseLeaderDisagreement"`, `alert="never"`},
	{"a crashed leader pages", "LeaseLeaderHung", "expr", "(scrape_duration_seconds >= 5)", "(scrape_duration_seconds >= 0)"},
	{"a hung follower pages", "LeaseLeaderHung", "expr", "[10m]) == 1)", "[10m]) >= 0)"},
	{"a slow leader that answers pages", "LeaseLeaderHung", "expr", "unless on (job, instance)", "unless on (job, instance) vector(0) *"},
	{"one lost scrape pages", "LeaseLeaderHung", "for", "30s", "15s"},
	{"exemption ignored", "LeaseLeaderHung", "expr", `alert=~"|LeaseLeaderHung"`, `alert="never"`},
	// The two recordings the participant alerts read.
	{"uuid kept", "namespace_lease_pod:lease_info:relabel", "expr", `"(.*?)(?:_`, `"(.*)(?:_`},
	{"frozen holder joined", "namespace_lease_pod:lease_info:relabel", "expr", "(lease_exporter_watch_up{job=~\".*lease-exporter.*\"} == 1 and", "(lease_exporter_watch_up{job=~\".*lease-exporter.*\"} >= 0 and"},
	{"unsynced holder joined", "namespace_lease_pod:lease_info:relabel", "expr", " lease_exporter_cache_synced{job=~\".*lease-exporter.*\"} == 1)", " lease_exporter_cache_synced{job=~\".*lease-exporter.*\"} >= 0)"},
	{"followers count as leading", "namespace_lease_pod:leader_election_master_status:max", "expr", "(leader_election_master_status == 1)", "leader_election_master_status"},
	{"a deleted leader's last sample counts beside its successor", "namespace_lease_pod:leader_election_master_status:max", "expr", "<= on (namespace, lease) group_left ()", "<= on (namespace, lease) group_left () -1e12 *"},
	{"only reports from before the acquisition count", "namespace_lease_pod:leader_election_master_status:max", "expr", "<= on (namespace, lease) group_left ()", "> on (namespace, lease) group_left ()"},
	{"the holder's clock taken for the exporter's", "namespace_lease_pod:leader_election_master_status:max", "expr", "- lease_holder_clock_skew_seconds", "+ 0 * lease_holder_clock_skew_seconds"},
	{"the skew subtracted the wrong way", "namespace_lease_pod:leader_election_master_status:max", "expr", "- lease_holder_clock_skew_seconds", "+ lease_holder_clock_skew_seconds"},
	{"no acquisition before the skew is measured", "namespace_lease_pod:leader_election_master_status:max", "expr", "\n      or\n        lease_acquire_timestamp_seconds{job=~\".*lease-exporter.*\", class=\"leader-election\"}", ""},
	{"locks the exporter does not see join", "namespace_lease_pod:leader_election_master_status:max", "expr", "\nand on (namespace, lease)\n  namespace_lease_pod:lease_info:relabel", ""},
	{"stale threshold doubled", "LeaseExporterWatchStale", "expr", "> 60", "> 120"},
	{"not-synced pages early", "LeaseExporterNotSynced", "for", "5m", "2m"},
	{"no absent branch", "LeaseExporterDown", "expr", "\nor\nabsent(up{job=~\".*lease-exporter.*\"})", ""},
	{"any job", "LeaseExporterDown", "expr", "up{job=~\".*lease-exporter.*\"} == 0", "up == 0"},
	{"pages on a rollout's scrape gap", "LeaseExporterNoFreshReplica", "for", "1m", "30s"},
	{"slow to page", "LeaseExporterNoFreshReplica", "for", "1m", "2m"},
	{"no never-seen branch", "LeaseExporterNoFreshReplica", "expr", "\nor\nabsent_over_time(up{job=~\".*lease-exporter.*\"}[1h])", ""},
	{"forgets vanished targets at once", "LeaseExporterNoFreshReplica", "expr", "[1h]))", "[5m]))"},
	{"unsynced counts as fresh", "LeaseExporterNoFreshReplica", "expr", "lease_exporter_cache_synced{job=~\".*lease-exporter.*\"} == 1", "lease_exporter_cache_synced{job=~\".*lease-exporter.*\"} >= 0"},
	{"stale counts as fresh", "LeaseExporterNoFreshReplica", "expr", "lease_exporter_watch_up{job=~\".*lease-exporter.*\"} == 1", "lease_exporter_watch_up{job=~\".*lease-exporter.*\"} >= 0"},
	{"one healthy deployment hides another", "LeaseExporterNoFreshReplica", "expr", "(namespace, job)", "(job)"},
}

func TestMutantsAreCaught(t *testing.T) {
	src := readSource(t)
	suites := testSuites(t)
	// The control is no mutation at all and must pass: otherwise every mutant would be
	// "caught" by a broken harness.
	control := mutant{name: "control (unmutated)", alert: "LeaseNoLeader", field: "expr", old: "(", new: "("}
	for _, m := range append([]mutant{control}, mutants...) {
		t.Run(m.alert+"/"+m.name, func(t *testing.T) {
			t.Parallel()
			mutated := mutate(t, src, m)
			// Rebuild the suites' world in a temp dir: the mutated rules where the suites
			// expect them.
			// The repository's layout is mirrored under world, this directory's stand-in.
			world := filepath.Join(t.TempDir(), "mixin", "render")
			write(t, filepath.Join(world, source), mutated)
			// The suites that name the mutated rule come first: a mutant is caught as soon as
			// one suite fails, so most mutants cost one promtool run instead of all of them.
			var named, others []string
			for _, s := range suites {
				b, err := os.ReadFile(s)
				if err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(world, s), b)
				if bytes.Contains(b, []byte(m.alert)) {
					named = append(named, filepath.Join(world, s))
				} else {
					others = append(others, filepath.Join(world, s))
				}
			}
			if out, err := runPromtool(t, "check", "rules", filepath.Join(world, source)); err != nil {
				t.Fatalf("mutant is not a valid rule file, fix the mutant: %v\n%s", err, out)
			}
			if m == control {
				if out, err := runPromtool(t, append([]string{"test", "rules"}, append(named, others...)...)...); err != nil {
					t.Fatalf("the unmutated rules fail in the mutation harness: %v\n%s", err, out)
				}
				return
			}
			var outs []string
			for _, suite := range append(named, others...) {
				out, err := runPromtool(t, "test", "rules", suite)
				if err == nil {
					outs = append(outs, out)
					continue
				}
				if !strings.Contains(out, "FAILED") {
					t.Errorf("promtool failed without a failing test case: %v\n%s", err, out)
				}
				return // caught
			}
			t.Errorf("promtool test rules passes with this mistake in %s; add a case that catches it.\n%s", m.alert, strings.Join(outs, ""))
		})
	}
}

// mutate applies m to its alert only, and insists the text it replaces is there, so a
// mutant cannot silently stop mutating when the rule is edited.
func mutate(t *testing.T, src []byte, m mutant) []byte {
	t.Helper()
	var rf ruleFile
	if err := yaml.Unmarshal(src, &rf); err != nil {
		t.Fatal(err)
	}
	r := findAlert(&rf, m.alert)
	for gi := range rf.Groups {
		for ri := range rf.Groups[gi].Rules {
			if rr := &rf.Groups[gi].Rules[ri]; r == nil && rr.Record == m.alert {
				r = rr // a recording rule, named like an alert in mutants
			}
		}
	}
	if r == nil {
		t.Fatalf("no alert or recording rule %s", m.alert)
	}
	var field *string
	switch m.field {
	case "expr":
		field = &r.Expr
	case "for":
		field = &r.For
	case "description":
		d := r.Annotations["description"]
		field = &d
	}
	if field == nil || !strings.Contains(*field, m.old) {
		t.Fatalf("%s %s does not contain %q; update the mutant", m.alert, m.field, m.old)
	}
	*field = strings.ReplaceAll(*field, m.old, m.new)
	if m.field == "description" {
		r.Annotations["description"] = *field
	}
	b, err := yaml.Marshal(rf)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
