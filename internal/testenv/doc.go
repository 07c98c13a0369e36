// Package testenv is the root of lease-exporter's test and development environment: a real
// local control plane (controlplane), real client-go electors (election), the exporter as a
// separate process (exporterproc), its container image built from the Dockerfile (image), real
// Prometheus and Alertmanager (promstack), a real Perses with its plugins (perses), and the
// one harness the suites (test/integration, test/reliability, test/e2e) share (testsuite:
// TestMain, the control plane started while the release binary builds, exporters that print
// their log when a test fails, prompt API server outages, which tests may run side by side).
// The fakes the product's unit tests share live here too: fake (a one-Lease informer.View)
// and syncbuffer (a log sink safe to read while written). Nothing in the product imports it;
// only tests do.
package testenv
