//go:build tools

// Package tools names the Kubernetes 1.34 commands that ../build.sh builds (it reads
// the imports below) and makes `go mod tidy` keep every module they need in go.sum.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
