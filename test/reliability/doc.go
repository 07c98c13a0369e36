// Package reliability holds lease-exporter's fault, load, bad-input and security tests: the
// release-built binary (and a -race build of it) runs as a separate process against a real
// etcd and kube-apiserver (internal/testenv/controlplane), which the tests stop, restart, starve of
// RBAC and flood with scrapes. Every assertion reads /metrics, the probes or the process's
// own output and exit code, as an operator would. docs/reliability.md lists every case.
//
// The tests need KUBEBUILDER_ASSETS and fail without it:
//
//	KUBEBUILDER_ASSETS=$(hack/kube-binaries/build.sh | tail -1) go test -race -timeout 20m ./test/reliability/
//
// They take about 8 minutes on 2 cores; the 60 s API server outage and the 60 s load run are
// the long poles. -short skips both.
package reliability
