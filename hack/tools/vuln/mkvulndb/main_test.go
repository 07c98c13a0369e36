package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The source form of the Go vulnerability database leaves "modified" unset (0001-01-01); the
// database built from it must carry the given date instead, in the indexes and in the entry.
func TestBuildStampsUnsetModified(t *testing.T) {
	out := filepath.Join(t.TempDir(), "db")
	stamp := time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC)
	n, err := build("../testdata", out, stamp)
	if err != nil || n != 2 {
		t.Fatalf("build: %d entries, %v; want 2", n, err)
	}
	var vulns []vulnMeta
	readJSON(t, filepath.Join(out, "index", "vulns.json"), &vulns)
	want := map[string]time.Time{
		"GO-0000-0001": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), // set in the file: kept
		"GO-0000-0002": stamp,                                       // unset: stamped
	}
	for _, v := range vulns {
		if !v.Modified.Equal(want[v.ID]) {
			t.Errorf("index: %s modified %s, want %s", v.ID, v.Modified, want[v.ID])
		}
		var e entry
		readJSON(t, filepath.Join(out, "ID", v.ID+".json"), &e)
		if !e.Modified.Equal(want[v.ID]) || len(e.Affected) != 1 {
			t.Errorf("entry %s: modified %s, %d affected; want %s, 1", v.ID, e.Modified, len(e.Affected), want[v.ID])
		}
	}
	var db map[string]time.Time
	readJSON(t, filepath.Join(out, "index", "db.json"), &db)
	if !db["modified"].Equal(stamp) {
		t.Errorf("db.json modified %s, want the newest entry's %s", db["modified"], stamp)
	}

	// Without a date, the file's own modification time stands in.
	if _, err := build("../testdata/osv-uncalled", out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat("../testdata/osv-uncalled/GO-0000-0002.json")
	if err != nil {
		t.Fatal(err)
	}
	var e entry
	readJSON(t, filepath.Join(out, "ID", "GO-0000-0002.json"), &e)
	if !e.Modified.Equal(info.ModTime().UTC().Truncate(time.Second)) {
		t.Errorf("entry without -modified: modified %s, want the file's %s", e.Modified, info.ModTime())
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
