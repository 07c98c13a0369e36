package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Vars maps Grafana template variable names to the values substituted for
// them. Grafana's own variables ($__rate_interval, ...) are included, so
// every query becomes plain PromQL a Prometheus parser can check.
type Vars map[string]string

// DefaultVars are sample values: well-formed, and for an end-to-end run
// against a real cluster they name a Lease that exists everywhere.
func DefaultVars() Vars {
	return Vars{
		"datasource":         "prometheus",
		"job":                "lease-exporter",
		"cluster":            ".*", // the "All" value: also matches series without a cluster label
		"namespace":          "kube-system",
		"lease":              "kube-controller-manager",
		"__rate_interval":    "1m",
		"__rate_interval_ms": "60000",
		"__interval":         "15s",
		"__interval_ms":      "15000",
		"__range":            "1h",
		"__range_s":          "3600",
		"__range_ms":         "3600000",
	}
}

// Grafana's three reference syntaxes: ${name} / ${name:format}, [[name]] /
// [[name:format]] and $name. The format suffix only changes how multi-values
// are joined, which single sample values do not need.
var varRef = regexp.MustCompile(`\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$(\w+)`)

var digits = regexp.MustCompile(`^[0-9]+$`)

// Substitute replaces every variable reference in s. A reference to a
// variable that has no value is an error, so a typo like $namesapce fails
// instead of reaching Prometheus as literal text. $1-style references are
// label_replace capture groups, which Grafana leaves alone too.
func (v Vars) Substitute(s string) (string, error) {
	var unknown []string
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRef.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		if digits.MatchString(name) {
			return m
		}
		val, ok := v[name]
		if !ok {
			unknown = append(unknown, "$"+name)
			return m
		}
		return val
	})
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", fmt.Errorf("unknown template variable(s) %s", strings.Join(unknown, ", "))
	}
	return out, nil
}

// Set implements flag.Value for repeated -var name=value flags.
func (v Vars) Set(kv string) error {
	name, val, ok := strings.Cut(kv, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, got %q", kv)
	}
	v[strings.TrimPrefix(name, "$")] = val
	return nil
}

func (v Vars) String() string { return "" }
