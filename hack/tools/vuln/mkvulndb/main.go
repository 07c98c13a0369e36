// Command mkvulndb builds a Go vulnerability database in the layout govulncheck reads with
// -db file:///DIR (index/db.json, index/modules.json, index/vulns.json, ID/<id>.json) from a
// directory of OSV JSON files, such as data/osv of a golang.org/x/vulndb checkout. It exists
// because vuln.go.dev is unreachable from our build machines and the module proxy refuses
// golang.org/x/vulndb: whoever can fetch the OSV files elsewhere can bring the database in.
//
// The source form of the database (data/osv of golang.org/x/vulndb) leaves every entry's
// "modified" at 0001-01-01T00:00:00Z: the database service stamps the real date when it
// publishes. mkvulndb stamps such entries with -modified (the snapshot's date, when known) or
// else the file's modification time, in the indexes and in the entry it serves.
//
// Usage: mkvulndb -osv DIR -out DIR [-modified 2026-08-21]
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
	modified := flag.String("modified", "", "date (YYYY-MM-DD or RFC 3339) for entries whose modified is unset; default: the file's modification time")
	flag.Parse()
	if *osvDir == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: mkvulndb -osv DIR -out DIR [-modified DATE]")
		os.Exit(2)
	}
	var stamp time.Time
	if *modified != "" {
		var err error
		if stamp, err = parseDate(*modified); err != nil {
			fmt.Fprintln(os.Stderr, "mkvulndb: -modified:", err)
			os.Exit(2)
		}
	}
	n, err := build(*osvDir, *out, stamp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkvulndb:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "mkvulndb: %d entries from %s into %s\n", n, *osvDir, *out)
}

// parseDate accepts a day (YYYY-MM-DD, midnight UTC) or an RFC 3339 time.
func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

// build writes the database; stamp (zero: each file's modification time) replaces an unset
// modified date.
func build(osvDir, out string, stamp time.Time) (int, error) {
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
		if e.ID == "" {
			return fmt.Errorf("%s: not an OSV entry (no id)", path)
		}
		if e.Modified.IsZero() {
			if e.Modified, err = stampFor(d, stamp); err != nil {
				return err
			}
			if raw, err = withModified(raw, e.Modified); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
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

// stampFor is the modified date for an entry in file d that has none.
func stampFor(d os.DirEntry, stamp time.Time) (time.Time, error) {
	if !stamp.IsZero() {
		return stamp, nil
	}
	info, err := d.Info()
	if err != nil {
		return time.Time{}, fmt.Errorf("stat %s: %w", d.Name(), err)
	}
	return info.ModTime().UTC().Truncate(time.Second), nil
}

// withModified returns the OSV record raw with its modified field set to t, every other field
// as it was.
func withModified(raw []byte, t time.Time) ([]byte, error) {
	var record map[string]json.RawMessage
	if err := json.Unmarshal(raw, &record); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	stamp, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	record["modified"] = stamp
	return json.Marshal(record)
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
