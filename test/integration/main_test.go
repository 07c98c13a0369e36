package integration_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// env is shared by every test in the package (testsuite.Suite: one control plane and one
// release build); tests isolate themselves by namespace.
var env *testEnv

type testEnv struct {
	*testsuite.Suite
	// exp watches every namespace with every family (--metrics.extended), like a
	// cluster-wide deployment, so each family is checked against the API server; the
	// default set has its own test (TestDefaultSeriesSet).
	exp *exporterproc.Exporter
	// version is kube-apiserver's, e.g. v1.34.4.
	version string
}

// TestMain sets up the shared environment. A missing KUBEBUILDER_ASSETS makes the package
// FAIL (exit 1 with the reason), never skip: a silently skipped end-to-end suite proves nothing.
func TestMain(m *testing.M) {
	os.Exit(testsuite.Main(m, "integration", &env, setup))
}

func setup(dir string) (_ *testEnv, err error) {
	// The audit log records every list, watch and write of Leases, so tests can see from the
	// API server how an exporter read them (TestInitialSyncIsStreamingList) and how often an
	// elector wrote (TestObservedRenewalsMatchTheWritesServed).
	s, err := testsuite.Start(dir, testsuite.Options{
		ControlPlane: controlplane.Options{AuditPolicy: controlplane.AuditLeaseReadsAndWrites},
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Teardown(true))
		}
	}()
	version, err := s.Client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("server version: %w", err)
	}
	// The suite runs once per Kubernetes version of the matrix (see the Makefile's test
	// target); the log says which.
	fmt.Fprintf(os.Stderr, "integration: kube-apiserver %s, etcd %s (KUBEBUILDER_ASSETS=%s)\n",
		version.GitVersion, s.CP.EtcdVersion(), s.CP.AssetsDir())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	exp, err := s.StartSharedExporter(ctx, "--metrics.extended")
	if err != nil {
		return nil, err
	}
	return &testEnv{Suite: s, exp: exp, version: version.GitVersion}, nil
}
