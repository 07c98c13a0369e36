//go:build tools

// Package tools pins the Prometheus Operator's command so that `go mod tidy` keeps every
// module it needs in go.sum; build.sh builds it by package path.
package tools

import (
	_ "github.com/prometheus-operator/prometheus-operator/cmd/operator"
)
