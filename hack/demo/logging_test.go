package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// Errors from the candidates' ordinary races are hidden below the warning level; any other
// error, or a benign text outside the error attribute, still shows.
func TestBenignRacesDemoted(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(benignRaces{newHandler(&buf, slog.LevelWarn)})
	logger.Error("Error initially creating lease lock", "err", errors.New(`leases.coordination.k8s.io "orders-worker" already exists`))
	logger.Error("Failed to update lease", "err", errors.New("Operation cannot be fulfilled on leases: the object has been modified"))
	logger.With("component", "x").Error("Error retrieving lease lock", "err", errors.New("context canceled"))
	if buf.Len() != 0 {
		t.Errorf("benign races printed:\n%s", buf.String())
	}
	logger.Error("Failed to update lease", "err", errors.New("connection refused"))
	logger.Error("already exists, but not as an error attribute")
	logger.Warn("a warning")
	if got := strings.Count(buf.String(), "\n"); got != 3 {
		t.Errorf("want 3 lines (two errors and a warning), got %d:\n%s", got, buf.String())
	}
	if strings.Contains(buf.String(), "\x1b[") {
		t.Errorf("colour codes written to a non-terminal:\n%q", buf.String())
	}
}
