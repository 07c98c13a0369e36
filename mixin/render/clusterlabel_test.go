package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// The multi-cluster rule, checked on parsed PromQL: every expression keeps or filters by the
// cluster label, so a global query layer never mixes clusters in one number.
//   - An aggregation that drops the label (by without it, without with it) is allowed only
//     over input filtered to one cluster: every selector beneath has label="value".
//     topk, bottomk and limitk keep their input's labels and are no concern.
//   - absent()/absent_over_time() keep only equality-matched labels: the same filter rule.
//   - Vector matching: on (...) must list the label, ignoring (...) must not, unless both
//     sides are filtered to one cluster.
//   - label_replace/label_join must not write the label.
//
// clusterViolations returns what breaks it, each naming the offending part.
func clusterViolations(expr parser.Expr, label string) []string {
	var out []string
	bad := func(n parser.Node, why string) { out = append(out, fmt.Sprintf("%s: %s", why, n)) }
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.AggregateExpr:
			switch n.Op {
			case parser.TOPK, parser.BOTTOMK, parser.LIMITK, parser.LIMIT_RATIO:
				return nil
			}
			kept := slices.Contains(n.Grouping, label) != n.Without
			if !kept && !filtered(n.Expr, label) {
				bad(n, fmt.Sprintf("%s drops %s over more than one cluster", n.Op, label))
			}
		case *parser.Call:
			switch n.Func.Name {
			case "absent", "absent_over_time", "scalar":
				if !filtered(n, label) {
					bad(n, fmt.Sprintf("%s() drops %s over more than one cluster", n.Func.Name, label))
				}
			case "label_replace", "label_join":
				if dst, ok := n.Args[1].(*parser.StringLiteral); ok && dst.Val == label {
					bad(n, n.Func.Name+" overwrites "+label)
				}
			}
		case *parser.BinaryExpr:
			m := n.VectorMatching
			if m == nil || (!m.On && len(m.MatchingLabels) == 0) {
				return nil // matching on every label, the cluster label included
			}
			if slices.Contains(m.MatchingLabels, label) == m.On {
				return nil
			}
			if !filtered(n.LHS, label) || !filtered(n.RHS, label) {
				bad(n, fmt.Sprintf("vector matching %s ignores %s", matchingText(m), label))
			}
		}
		return nil
	})
	return out
}

func matchingText(m *parser.VectorMatching) string {
	kw := "ignoring"
	if m.On {
		kw = "on"
	}
	return kw + " (" + strings.Join(m.MatchingLabels, ", ") + ")"
}

// filtered: every selector in e has label="non-empty value" (and there is at least one).
func filtered(e parser.Node, label string) bool {
	sels := 0
	ok := true
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		if vs, isSel := node.(*parser.VectorSelector); isSel {
			sels++
			ok = ok && slices.ContainsFunc(vs.LabelMatchers, func(m *labels.Matcher) bool {
				return m.Name == label && m.Type == labels.MatchEqual && m.Value != ""
			})
		}
		return nil
	})
	return ok && sels > 0
}

// labelNames lists every label name an expression mentions: matchers, grouping, vector
// matching and the label arguments of label_replace/label_join.
func labelNames(expr parser.Expr) []string {
	var out []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			for _, m := range n.LabelMatchers {
				out = append(out, m.Name)
			}
		case *parser.AggregateExpr:
			out = append(out, n.Grouping...)
		case *parser.BinaryExpr:
			if n.VectorMatching != nil {
				out = append(out, n.VectorMatching.MatchingLabels...)
				out = append(out, n.VectorMatching.Include...)
			}
		case *parser.Call:
			// label_replace(v, dst, replacement, src, regex); label_join(v, dst, sep, src...).
			var names []parser.Expr
			switch n.Func.Name {
			case "label_replace":
				names = []parser.Expr{n.Args[1], n.Args[3]}
			case "label_join":
				names = append([]parser.Expr{n.Args[1]}, n.Args[3:]...)
			}
			for _, a := range names {
				if s, ok := a.(*parser.StringLiteral); ok {
					out = append(out, s.Val)
				}
			}
		}
		return nil
	})
	return out
}

// Sample values for Grafana's variables, so a panel query parses as the PromQL Grafana sends.
var grafanaVars = map[string]string{
	"job": "lease-exporter", "cluster": "a", "namespace": "ns", "lease": "l",
	"__rate_interval": "1m", "__range": "1h", "__interval": "15s",
}

// Grafana variables only: "$1" in a label_replace replacement is PromQL's own.
var varRef = regexp.MustCompile(`\$\{?([a-zA-Z_]\w*)\}?`)

func substitute(q string) (string, error) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(q, func(m string) string {
		name := varRef.FindStringSubmatch(m)[1]
		if v, ok := grafanaVars[name]; ok {
			return v
		}
		missing = append(missing, name)
		return m
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("unknown variables %v", missing)
	}
	return out, nil
}
