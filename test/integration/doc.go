// Package integration holds the end-to-end tests of lease-exporter: a real etcd and
// kube-apiserver (internal/controlplane), real client-go leader elections
// (internal/election) and real kube-scheduler / kube-controller-manager processes, observed
// by the release-built exporter binary running as a separate process (internal/exporterproc).
// Every assertion reads /metrics over HTTP, as Prometheus would.
//
// The tests need KUBEBUILDER_ASSETS and fail without it:
//
//	KUBEBUILDER_ASSETS=$(hack/controlplane/build.sh | tail -1) go test -race ./test/integration/
package integration
