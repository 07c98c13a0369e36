//go:build release

// Package node_test installs what users install (the image built from the Dockerfile, the
// Helm chart, the Kustomize trees) on a real one-node cluster (internal/testenv/node) and
// checks it where it runs. Root only; one node at a time per machine.
package node_test

import (
	"os"
	"testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/node"
)

func TestMain(m *testing.M) {
	node.ReaperMain()
	os.Exit(m.Run())
}
