//go:build tools

// Package perses pins, in go.mod and go.sum, the Perses plugin modules whose CUE schemas
// hack/perses/plugins.sh assembles into the plugin directory that percli lint and the Perses
// server validate against. Nothing imports these packages to run them: the blank imports keep
// `go mod tidy` from dropping the modules, so go.sum holds their hashes (the checksum database
// has no entries for github.com/perses/plugins; GONOSUMDB is set for that path only).
package perses

import (
	_ "github.com/perses/plugins/markdown/sdk/go"
	_ "github.com/perses/plugins/prometheus/sdk/go/query"
	_ "github.com/perses/plugins/statchart/sdk/go"
	_ "github.com/perses/plugins/timeserieschart/sdk/go"
)
