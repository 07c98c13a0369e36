// Package integration checks what the exporter binary says on /metrics about real elections:
// real client-go electors, kube-scheduler and kube-controller-manager on a real local control
// plane (internal/testenv), the release-built exporter as a separate process, every assertion
// read over HTTP as Prometheus would. Alerts and dashboards are test/e2e's; faults and load are
// test/reliability's.
//
// The tests need KUBEBUILDER_ASSETS and fail without it. `make test` runs them on Kubernetes
// 1.36 and `make test-release` on the other versions of docs/compatibility.md (1.35, 1.34):
//
//	KUBEBUILDER_ASSETS=$(hack/kube-binaries/build.sh | tail -1) go test -race ./test/integration/
//	KUBEBUILDER_ASSETS=$(hack/kube-binaries/build.sh 1.34 | tail -1) go test -race ./test/integration/
package integration
