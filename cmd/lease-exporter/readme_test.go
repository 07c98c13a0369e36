package main

import (
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lease-exporter/lease-exporter/lock"
)

// TestREADMEDocumentsEveryFlag keeps the README's flag table and the flags in step: a flag
// added without a row, or a row left for a removed flag, fails here.
func TestREADMEDocumentsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	rowFlag := regexp.MustCompile("`--([a-z0-9.-]+)`")
	for line := range strings.Lines(string(readme)) {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`--") {
			continue
		}
		for _, m := range rowFlag.FindAllStringSubmatch(cells[1], -1) {
			documented = append(documented, m[1])
		}
	}
	fs := flag.NewFlagSet("lease-exporter", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	(&options{}).AddFlags(fs)
	var defined []string
	fs.VisitAll(func(f *flag.Flag) {
		if _, hidden := hiddenAliases[f.Name]; !hidden {
			defined = append(defined, f.Name)
		}
	})
	slices.Sort(documented)
	slices.Sort(defined)
	for _, name := range defined {
		if !slices.Contains(documented, name) {
			t.Errorf("flag --%s is not in the README's flag table", name)
		}
	}
	for _, name := range documented {
		if !slices.Contains(defined, name) {
			t.Errorf("README documents --%s, which the exporter does not have", name)
		}
	}
}

// TestREADMEListsEveryLockKind: the README's --locks row names the value of every lock kind
// in informer's table, so a new kind cannot ship undocumented.
func TestREADMEListsEveryLockKind(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for line := range strings.Lines(string(readme)) {
		if strings.HasPrefix(line, "| `--locks` |") {
			row = line
		}
	}
	if row == "" {
		t.Fatal("README has no --locks row")
	}
	for _, k := range lock.Kinds {
		if !strings.Contains(row, "`"+k.Resource()+"`") {
			t.Errorf("README's --locks row does not list `%s`", k.Resource())
		}
	}
}

// TestREADMENamesEveryResourceTheDefaultRoleGrants: the README's "The identity needs" sentence
// names each resource the Kustomize base ClusterRole (the default install's permissions) grants,
// so a permission the exporter starts needing cannot go unsaid.
func TestREADMENamesEveryResourceTheDefaultRoleGrants(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "The identity needs")
	if !ok {
		t.Fatal(`README has no "The identity needs" sentence`)
	}
	sentence, _, _ := strings.Cut(after, "\n\n")
	role, err := os.ReadFile("../../deploy/kustomize/base/cluster-rbac/clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var resources []string
	inResources := false
	for line := range strings.Lines(string(role)) {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasSuffix(trimmed, ":"):
			inResources = trimmed == "resources:"
		case inResources && strings.HasPrefix(trimmed, "- "):
			resources = append(resources, strings.TrimPrefix(trimmed, "- "))
		}
	}
	if len(resources) == 0 {
		t.Fatal("found no resources in the base ClusterRole")
	}
	for _, r := range resources {
		if !strings.Contains(sentence, "`"+r+".") && !strings.Contains(sentence, "`"+r+"`") {
			t.Errorf("the README's RBAC sentence does not name %s, which the default ClusterRole grants", r)
		}
	}
}
