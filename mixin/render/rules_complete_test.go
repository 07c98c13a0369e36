package main

import (
	"os"
	"testing"
)

// source is the rendered rule file under test, as Prometheus loads it, and suites the
// promtool suites that test it (their rule_files name it relative to themselves).
const (
	source = repoRoot + "/alerts/lease-exporter.rules.yml"
	suites = "../tests/*.yml"
)

// The conventions the mixin keeps in every rule with the default _config (mixin/alerts/
// leases.libsonnet), which lint_test.go checks.
const (
	defaultJobSelector   = `job=~".*lease-exporter.*"`
	defaultReplicaLabels = "without (instance, pod)"
	exemptMetric         = "lease_exporter:alert_exempt"
	// The default runbookURLPattern's prefix: the runbooks in docs/runbooks.
	defaultRunbookBaseURL = "https://github.com/lease-exporter/lease-exporter/blob/main/docs/runbooks/"
)

// ruleFile mirrors the Prometheus rule file format.
type ruleFile struct {
	Groups []ruleGroup `yaml:"groups"`
}

type ruleGroup struct {
	Name  string `yaml:"name"`
	Rules []rule `yaml:"rules"`
}

type rule struct {
	Record      string            `yaml:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// prometheusRule is the operator's resource the mixin renders for Kustomize and Helm.
type prometheusRule struct {
	Spec struct {
		Groups []ruleGroup `yaml:"groups"`
	} `yaml:"spec"`
}

func readSource(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func findAlert(rf *ruleFile, name string) *rule {
	for gi := range rf.Groups {
		for ri := range rf.Groups[gi].Rules {
			if rf.Groups[gi].Rules[ri].Alert == name {
				return &rf.Groups[gi].Rules[ri]
			}
		}
	}
	return nil
}
