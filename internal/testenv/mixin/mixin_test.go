package mixin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Render runs the repository's one renderer from wherever it lives: a suite that renders
// another _config (test/e2e, test/thanos, hack/detect) gets the rules with the override
// applied and the dashboards beside them.
func TestRenderAppliesTheOverride(t *testing.T) {
	r, err := Render(context.Background(), `{ alerts+: { LeaseNoLeader+: { 'for': '7m' } } }`, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile(r.Alerts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rules), "alert: LeaseNoLeader") || !strings.Contains(string(rules), "for: 7m") {
		t.Errorf("%s has no LeaseNoLeader with the overridden for: 7m", r.Alerts)
	}
	if ds, _ := filepath.Glob(filepath.Join(r.Dashboards, "*.json")); len(ds) == 0 {
		t.Errorf("no dashboards in %s", r.Dashboards)
	}
}
