package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDeployMatchesLockKinds fails while a file deploy/ derives from the lock kinds
// table differs from what the table gives now: a kind was added, removed or changed (or the
// file edited by hand) without `make generate`.
func TestDeployMatchesLockKinds(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, o := range outputs() {
		old, err := os.ReadFile(filepath.Join(root, o.path))
		if err != nil {
			t.Errorf("%v: run make generate", err)
			continue
		}
		want, err := o.render(old)
		if err != nil {
			t.Errorf("%s: %v", o.path, err)
			continue
		}
		if !bytes.Equal(old, want) {
			t.Errorf("%s differs from the lock kinds table: run make generate\nwant:\n%s", o.path, want)
		}
	}
}
