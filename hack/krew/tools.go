//go:build tools

// krew's own commands, pinned by this module's go.mod: validate-krew-manifest (krew-index's
// check of a manifest) and krew itself, to install the plugin from the manifest.
package main

import (
	_ "sigs.k8s.io/krew/cmd/krew"
	_ "sigs.k8s.io/krew/cmd/validate-krew-manifest"
)
