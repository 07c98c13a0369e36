package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-jsonnet"
)

// TestDocsListEveryConfigKey: docs/mixin.md documents every _config key, and its table states
// each alert's default `for` as config.libsonnet has it.
func TestDocsListEveryConfigKey(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "mixin.md"))
	if err != nil {
		t.Fatal(err)
	}
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{filepath.Join(repoRoot, "mixin")}})
	out, err := vm.EvaluateAnonymousSnippet("keys.jsonnet", `(import 'mixin.libsonnet')._config`)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &cfg); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // first cell of each table row -> the row
	for _, l := range strings.Split(string(doc), "\n") {
		if cells := strings.Split(l, "|"); len(cells) > 3 && strings.HasPrefix(l, "| `") {
			rows[strings.TrimSpace(cells[1])] = l
		}
	}
	for key := range cfg {
		if key == "alerts" {
			continue
		}
		if _, ok := rows["`"+key+"`"]; !ok {
			t.Errorf("docs/mixin.md has no row for _config.%s", key)
		}
	}
	var alerts map[string]map[string]any
	if err := json.Unmarshal(cfg["alerts"], &alerts); err != nil {
		t.Fatal(err)
	}
	for name, knobs := range alerts {
		var row string
		for first, r := range rows {
			if strings.HasPrefix(first, "`alerts."+name+".for`") {
				row = r
			}
		}
		if row == "" {
			t.Errorf("docs/mixin.md has no row for _config.alerts.%s", name)
			continue
		}
		want := knobs["for"].(string)
		if want == "" {
			want = "none"
		}
		if cells := strings.Split(row, "|"); !strings.Contains(cells[2], want) {
			t.Errorf("docs/mixin.md says alerts.%s.for defaults to %s; config.libsonnet says %s", name, strings.TrimSpace(cells[2]), want)
		}
	}
}
