// Command mkvulndb builds a Go vulnerability database in the layout govulncheck reads with
// -db file:///DIR (index/db.json, index/modules.json, index/vulns.json, ID/<id>.json) from a
// directory of OSV JSON files, such as data/osv of a golang.org/x/vulndb checkout. It exists
// because vuln.go.dev is unreachable from our build machines and the module proxy refuses
// golang.org/x/vulndb: whoever can fetch the OSV files elsewhere can bring the database in.
//
// Usage: mkvulndb -osv DIR -out DIR
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// entry is the part of an OSV record the indexes need.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
		Ranges []struct {
			Events []struct {
				Fixed string `json:"fixed,omitempty"`
			} `json:"events"`
		} `json:"ranges"`
	} `json:"affected"`
}

// moduleVuln and moduleMeta mirror golang.org/x/vuln/internal/client's index schema.
type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Fixed    string    `json:"fixed,omitempty"`
}

type moduleMeta struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

type vulnMeta struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
}

func main() {
	osvDir := flag.String("osv", "", "directory of OSV JSON files (searched recursively)")
	out := flag.String("out", "", "output directory; replaced if it exists")
	flag.Parse()
	if *osvDir == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: mkvulndb -osv DIR -out DIR")
		os.Exit(2)
	}
	n, err := build(*osvDir, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkvulndb:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "mkvulndb: %d entries from %s into %s\n", n, *osvDir, *out)
}

func build(osvDir, out string) (int, error) {
	if err := os.RemoveAll(out); err != nil {
		return 0, fmt.Errorf("clear %s: %w", out, err)
	}
	for _, d := range []string{"index", "ID"} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			return 0, fmt.Errorf("create %s: %w", d, err)
		}
	}
	modules := map[string]*moduleMeta{}
	var vulns []vulnMeta
	var newest time.Time
	err := filepath.WalkDir(osvDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("parse %s: %w", path, err)
		}
		if e.ID == "" || e.Modified.IsZero() {
			return fmt.Errorf("%s: not an OSV entry (no id or modified)", path)
		}
		newest = maxTime(newest, e.Modified)
		vulns = append(vulns, vulnMeta{ID: e.ID, Modified: e.Modified, Aliases: e.Aliases})
		for _, a := range e.Affected {
			m := modules[a.Package.Name]
			if m == nil {
				m = &moduleMeta{Path: a.Package.Name}
				modules[a.Package.Name] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified, Fixed: latestFix(a.Ranges)})
		}
		// The entry endpoint serves the OSV record itself.
		return os.WriteFile(filepath.Join(out, "ID", e.ID+".json"), raw, 0o644)
	})
	if err != nil {
		return 0, err
	}
	if len(vulns) == 0 {
		return 0, errors.New("no OSV entries found in " + osvDir)
	}
	index := make([]*moduleMeta, 0, len(modules))
	for _, m := range modules {
		slices.SortFunc(m.Vulns, func(a, b moduleVuln) int { return strings.Compare(a.ID, b.ID) })
		index = append(index, m)
	}
	slices.SortFunc(index, func(a, b *moduleMeta) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(vulns, func(a, b vulnMeta) int { return strings.Compare(a.ID, b.ID) })
	for name, v := range map[string]any{"db.json": map[string]time.Time{"modified": newest}, "modules.json": index, "vulns.json": vulns} {
		b, err := json.Marshal(v)
		if err != nil {
			return 0, fmt.Errorf("encode %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(out, "index", name), b, 0o644); err != nil {
			return 0, fmt.Errorf("write %s: %w", name, err)
		}
	}
	return len(vulns), nil
}

// latestFix returns the highest fixed version of the ranges, without the "v" prefix, as the
// modules index wants it; "" when no fix exists.
func latestFix(ranges []struct {
	Events []struct {
		Fixed string `json:"fixed,omitempty"`
	} `json:"events"`
}) string {
	best := ""
	for _, r := range ranges {
		for _, ev := range r.Events {
			if ev.Fixed != "" && (best == "" || semver.Compare("v"+ev.Fixed, "v"+best) > 0) {
				best = ev.Fixed
			}
		}
	}
	return best
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
