// The mixin's renderer and its tests (hack/mixin/README.md... see main.go). A module of its
// own so that go-jsonnet and the Prometheus parser never reach the exporter's go.mod.
module github.com/lease-exporter/lease-exporter/hack/mixin

go 1.26.8

require (
	github.com/google/go-jsonnet v0.22.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	golang.org/x/crypto v0.45.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
	sigs.k8s.io/yaml v1.4.0 // indirect
)
