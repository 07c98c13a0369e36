// Package plugins registers the service discovery mechanisms Prometheus is built with. This
// file replaces Prometheus's generated plugins/plugins.go in ../build.sh (go build -overlay),
// as upstream's plugins.yml and `make plugins` do: only Kubernetes discovery, the one the
// operator's configuration uses, instead of every cloud's (their SDKs are most of a cold
// build). Static and file discovery are built in regardless.
package plugins

import (
	// Register kubernetes plugin.
	_ "github.com/prometheus/prometheus/discovery/kubernetes"
)
