// Package testenv is the root of lease-exporter's test and development environment: a real
// local control plane (controlplane), real client-go electors (election), the exporter as a
// separate process (exporterproc), real Prometheus and Alertmanager (promstack), and the
// TestMain skeleton the suites share (testsuite). Nothing in the product imports it.
package testenv
