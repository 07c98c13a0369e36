package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMakeUnitCoversEveryProductPackage: `make unit` tests every top-level directory of
// product code (Go files outside test/, internal/ and hack/, a nested module's included), so a new package, or one
// dropped from the list, cannot go untested by the fast target.
func TestMakeUnitCoversEveryProductPackage(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var recipe string
	inUnit := false
	for line := range strings.Lines(string(mk)) {
		switch {
		case strings.HasPrefix(line, "unit:"):
			inUnit = true
		case inUnit && strings.HasPrefix(line, "\t"):
			if !strings.HasPrefix(strings.TrimSpace(line), "@#") {
				recipe += line
			}
		case inUnit:
			inUnit = false
		}
	}
	if !strings.Contains(recipe, "test") {
		t.Fatalf("found no go test in the Makefile's unit recipe: %q", recipe)
	}
	listed := regexp.MustCompile(`\./([a-z0-9_-]+)/\.\.\.`).FindAllStringSubmatch(recipe, -1)
	var covered []string
	for _, m := range listed {
		covered = append(covered, m[1])
	}
	// A module of its own (mixin/render) is tested from its directory: `cd mixin/render && go test`.
	for _, m := range regexp.MustCompile(`cd ([a-z0-9_-]+)/[a-z0-9_/-]+ && .*test`).FindAllStringSubmatch(recipe, -1) {
		covered = append(covered, m[1])
	}
	entries, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	products := 0
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || name == "test" || name == "internal" || name == "hack" {
			continue
		}
		if !hasGoFiles(t, filepath.Join("../..", name)) {
			continue
		}
		products++
		if !slices.Contains(covered, name) {
			t.Errorf("make unit does not test ./%s/... (add it to the Makefile's unit target)", name)
		}
	}
	if products < 6 {
		t.Fatalf("found only %d product directories: is the walk broken?", products)
	}
}

func hasGoFiles(t *testing.T, dir string) bool {
	found := false
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			found = true
			return filepath.SkipAll
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestDeployDocGivesTheReleaseTierChurn: docs/deploy.md's sizing run says how long `make
// test-release` churns, which is test/node's churnDuration default (`return N * time.Minute`,
// read from its source: test/node is a root-only release suite this package cannot import).
func TestDeployDocGivesTheReleaseTierChurn(t *testing.T) {
	src, err := os.ReadFile("../../test/node/scale_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "func churnDuration(")
	if !ok {
		t.Fatal("test/node/scale_test.go has no churnDuration")
	}
	m := regexp.MustCompile(`\n\treturn (\d+) \* time\.Minute\n`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("churnDuration's default is not `return N * time.Minute`: update this test")
	}
	doc, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	unit := "minutes"
	if m[1] == "1" {
		unit = "minute"
	}
	if want := "`make test-release` churns " + m[1] + " " + unit; !strings.Contains(string(doc), want) {
		t.Errorf("docs/deploy.md does not say %q (test/node's churnDuration default)", want)
	}
}
