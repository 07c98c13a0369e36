//go:build tools

// Package tools pins govulncheck, which hack/govulncheck.sh builds from the Go module proxy at
// the version in this go.mod. A module of its own, like hack/tools, so that govulncheck's
// dependencies (golang.org/x/tools and friends) never enter the exporter's go.mod.
package tools

import (
	_ "golang.org/x/vuln/cmd/govulncheck"
)
