package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The plugin prints the exporter's JSON types (statuspage/api) but links none of the status
// page: not its package, whose HTML templates would be parsed at every start, nor
// html/template at all.
func TestPluginLinksNoStatusPageNorHTMLTemplates(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the plugin's dependencies")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages, want the plugin's whole graph: %q", len(deps), deps)
	}
	for _, banned := range []string{"html/template", "github.com/lease-exporter/lease-exporter/statuspage"} {
		for _, d := range deps {
			if d == banned {
				t.Errorf("kubectl-lease links %s: import statuspage/api for the JSON types, not the status page", banned)
			}
		}
	}
}
