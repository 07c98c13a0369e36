package lock

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The rule file is loaded by Prometheus as it is, so its thresholds are PromQL literals, not
// substituted from Go. These tests hold them to the exporter's judgement (judgement.go), which the metrics and the status page call: the alerts cannot call a holder
// skewed, or a candidate stale, that the page calls fine, or the other way round.

// judgementSeries is one input series of a generated promtool suite.
type judgementSeries struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

type judgementAlert struct {
	ExpLabels map[string]string `yaml:"exp_labels"`
}

type judgementAlertTest struct {
	EvalTime  string           `yaml:"eval_time"`
	Alertname string           `yaml:"alertname"`
	ExpAlerts []judgementAlert `yaml:"exp_alerts"`
}

// judgementCases builds the input series and the expected alerts of a suite case by case.
type judgementCases struct {
	series []judgementSeries
	skew   []judgementAlert
	stale  []judgementAlert
}

// judgementEval is when the suite evaluates; every sample sits on the 1m grid before it.
const judgementEval = 2 * time.Minute

// exporterSeries are what every fresh exporter replica exports besides the per-lease series.
var exporterSeries = []judgementSeries{
	{`lease_exporter_watch_up{job="lease-exporter",instance="a",pod="p"}`, "1x3"},
	{`lease_exporter_cache_synced{job="lease-exporter",instance="a",pod="p"}`, "1x3"},
}

func seriesOf(metric, labels string) string {
	return metric + `{job="lease-exporter",instance="a",pod="p",` + labels + "}"
}

// addSkew adds a held lock of durationSeconds whose holder's clock is skewMillis off, and
// expects LeaseHolderClockSkew where the exporter's judgement calls the holder skewed.
func (c *judgementCases) addSkew(durationSeconds int32, skewMillis int64) {
	lease := fmt.Sprintf("d%d-s%d", durationSeconds, skewMillis)
	labels := `namespace="skew",lease="` + lease + `"`
	c.series = append(c.series,
		judgementSeries{seriesOf("lease_holder_clock_skew_seconds", labels), strconv.FormatFloat(float64(skewMillis)/1e3, 'g', -1, 64) + "x3"},
		judgementSeries{seriesOf("lease_duration_seconds", labels), fmt.Sprintf("%dx3", durationSeconds)},
		judgementSeries{seriesOf("lease_held", labels), "1x3"})
	skew := time.Duration(skewMillis) * time.Millisecond
	if max(skew, -skew) > skewTolerance(durationSeconds) {
		c.skew = append(c.skew, judgementAlert{map[string]string{"severity": "warning", "job": "lease-exporter", "namespace": "skew", "lease": lease}})
	}
}

// addCandidate adds a LeaseCandidate last seen renewing age before each scrape, named as its
// Lease's holder, and expects LeaseCandidateNotRenewing where the exporter calls it not fresh.
func (c *judgementCases) addCandidate(age time.Duration) {
	name := fmt.Sprintf("c%d", int64(age/time.Second))
	labels := `namespace="cand",lease="l-` + name + `"`
	// The observed renew time at each 1m scrape is the scrape's time minus age.
	c.series = append(c.series,
		judgementSeries{seriesOf("lease_candidate_observed_renew_timestamp_seconds", labels+`,candidate="`+name+`"`),
			fmt.Sprintf("%g+60x3", -age.Seconds())},
		judgementSeries{seriesOf("lease_info", labels+`,holder="`+name+`"`), "1x3"})
	at := judgementEval.Microseconds()
	candidate := Candidate{ObservedRenewTime: at - age.Microseconds()}
	if !candidate.Fresh(at) {
		c.stale = append(c.stale, judgementAlert{map[string]string{"severity": "warning", "job": "lease-exporter", "namespace": "cand", "lease": "l-" + name, "candidate": name}})
	}
}

// TestRulesJudgeAsTheExporter runs LeaseHolderClockSkew and LeaseCandidateNotRenewing,
// without their `for` (the suites in tests/ pin that), on either side of every edge of the
// exporter's judgement: skew at and 1 ms beyond skewTolerance, on lease durations
// under, at and over its clamp, either way; a candidate renewed just within, exactly at and
// just beyond CandidateFreshness.
func TestRulesJudgeAsTheExporter(t *testing.T) {
	var rf ruleFile
	if err := yaml.Unmarshal(readRules(t), &rf); err != nil {
		t.Fatal(err)
	}
	for gi := range rf.Groups {
		for ri := range rf.Groups[gi].Rules {
			r := &rf.Groups[gi].Rules[ri]
			r.Annotations = nil // they query series these cases need not carry
			if r.Alert == "LeaseHolderClockSkew" || r.Alert == "LeaseCandidateNotRenewing" {
				r.For = "" // the expressions alone; the suites in mixin/tests pin the `for`
			}
		}
	}

	var c judgementCases
	c.series = append(c.series, exporterSeries...)
	for _, d := range []int32{1, 8, 9, 15, 40, 119, 120, 121, 3600} {
		tol := skewTolerance(d).Milliseconds()
		for _, ms := range []int64{tol - 1, tol, tol + 1} {
			c.addSkew(d, ms)
			c.addSkew(d, -ms)
		}
	}
	for _, age := range []time.Duration{CandidateFreshness - time.Second, CandidateFreshness, CandidateFreshness + time.Second} {
		c.addCandidate(age)
	}
	if len(c.skew) == 0 || len(c.stale) == 0 {
		t.Fatal("the cases expect no alert at all; the harness is broken")
	}
	eval := judgementEval.String()
	suite := map[string]any{
		"rule_files":          []string{"rules.yml"},
		"evaluation_interval": "1m",
		"tests": []map[string]any{{
			"interval":     "1m",
			"input_series": c.series,
			"alert_rule_test": []judgementAlertTest{
				{EvalTime: eval, Alertname: "LeaseHolderClockSkew", ExpAlerts: c.skew},
				{EvalTime: eval, Alertname: "LeaseCandidateNotRenewing", ExpAlerts: c.stale},
			},
		}},
	}
	dir := t.TempDir()
	for name, v := range map[string]any{"rules.yml": rf, "suite.yml": suite} {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := runPromtool(t, "test", "rules", filepath.Join(dir, "suite.yml")); err != nil {
		t.Fatalf("the rules judge otherwise than the exporter (skewTolerance, CandidateFreshness): %v\n%s", err, out)
	}
}

// TestRuleTextStatesTheJudgement: what the alerts tell on-call about the thresholds is what
// the exporter's judgement uses.
func TestRuleTextStatesTheJudgement(t *testing.T) {
	freshness := strconv.FormatFloat(CandidateFreshness.Minutes(), 'f', -1, 64) + " minutes"
	want := map[string]string{
		"LeaseHolderClockSkew":             fmt.Sprintf("(a quarter of its duration, %s to %s)", minSkewTolerance, maxSkewTolerance),
		"LeaseCoordinatedNoFreshCandidate": "renewed in the last " + freshness,
	}
	if skewToleranceFraction != 0.25 {
		t.Errorf("skewToleranceFraction is %g; LeaseHolderClockSkew says a quarter", skewToleranceFraction)
	}
	rf := ruleFile{}
	if err := yaml.Unmarshal(readRules(t), &rf); err != nil {
		t.Fatal(err)
	}
	for alert, text := range want {
		r := ruleAlert(&rf, alert)
		if r == nil || !strings.Contains(strings.Join(strings.Fields(r.Annotations["description"]), " "), text) {
			t.Errorf("%s: the description does not say %q", alert, text)
		}
	}
}

// TestRenewalLaggingIsTheLateStanding: LeaseRenewalLagging fires past the fraction of the
// lease duration at which the per-class counts (lease_class_locks) call a held lock late, so
// the dashboards' late count and the alert name the same locks.
func TestRenewalLaggingIsTheLateStanding(t *testing.T) {
	rf := ruleFile{}
	if err := yaml.Unmarshal(readRules(t), &rf); err != nil {
		t.Fatal(err)
	}
	r := ruleAlert(&rf, "LeaseRenewalLagging")
	if r == nil {
		t.Fatal("no LeaseRenewalLagging in the rule file")
	}
	want := ") > " + strconv.FormatFloat(lateFraction, 'g', -1, 64)
	if !strings.Contains(r.Expr, want) {
		t.Errorf("LeaseRenewalLagging's threshold is not lateFraction (%g): its expression has no %q:\n%s", lateFraction, want, r.Expr)
	}
}

// ruleFile is a Prometheus rule file, as far as these tests read and rewrite it.
type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval,omitempty"`
		Limit    int    `yaml:"limit,omitempty"`
		Rules    []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Record      string            `yaml:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// readRules reads the shipped rule file, alerts/lease-exporter.rules.yml.
func readRules(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../alerts/lease-exporter.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ruleAlert is the alerting rule named name, nil if the file has none.
func ruleAlert(rf *ruleFile, name string) *rule {
	for gi := range rf.Groups {
		for ri := range rf.Groups[gi].Rules {
			if r := &rf.Groups[gi].Rules[ri]; r.Alert == name {
				return r
			}
		}
	}
	return nil
}

// runPromtool runs promtool (PROMTOOL, else from PATH). A missing promtool fails the test
// rather than skipping it: a skipped rule test reads as green while the rules go untested.
func runPromtool(t *testing.T, args ...string) (string, error) {
	t.Helper()
	p := os.Getenv("PROMTOOL")
	if p == "" {
		var err error
		if p, err = exec.LookPath("promtool"); err != nil {
			t.Fatalf("promtool is not in PATH, and the rules cannot be held to the judgement without it.\n"+
				"Install it (Debian/Ubuntu: apt-get install prometheus) or set PROMTOOL=/path/to/promtool. (%v)", err)
		}
	}
	out, err := exec.Command(p, args...).CombinedOutput()
	return string(out), err
}
