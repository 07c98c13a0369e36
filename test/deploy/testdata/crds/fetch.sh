#!/usr/bin/env bash
# Refreshes the vendored prometheus-operator CRDs (ServiceMonitor and
# PrometheusRule) from the Go module proxy: the prometheus-operator module ships
# them under example/prometheus-operator-crd/. The deploy tests install them
# into a real kube-apiserver so the rendered ServiceMonitor and PrometheusRule
# are validated by their real OpenAPI schemas.
#
# It also vendors the Perses operator's PersesDashboard CRD (perses.dev/v1alpha1, what
# the chart's and the Kustomize component's Perses dashboards are), from the
# github.com/perses/perses-operator module at PERSES_OPERATOR_VERSION: v0.2.0, the newest
# the proxy serves here.
#
# Usage: test/deploy/testdata/crds/fetch.sh [VERSION]   (default: the one in VERSION)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${1:-$(cat "$here/VERSION")}"
mod=github.com/prometheus-operator/prometheus-operator
# Outside any module, so the main go.mod is not touched.
dir="$(cd "$(mktemp -d)" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$mod@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ -z "$dir" ]]; then
	echo "fetch.sh: go mod download $mod@$version failed" >&2
	exit 1
fi
for crd in servicemonitors prometheusrules; do
	cp "$dir/example/prometheus-operator-crd/monitoring.coreos.com_$crd.yaml" "$here/"
	chmod 644 "$here/monitoring.coreos.com_$crd.yaml"
done
echo "$version" >"$here/VERSION"
perses_version="$(cat "$here/PERSES_OPERATOR_VERSION")"
dir="$(cd "$(mktemp -d)" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "github.com/perses/perses-operator@$perses_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ -z "$dir" ]]; then
	echo "fetch.sh: go mod download github.com/perses/perses-operator@$perses_version failed" >&2
	exit 1
fi
cp "$dir/config/crd/bases/perses.dev_persesdashboards.yaml" "$here/"
chmod 644 "$here/perses.dev_persesdashboards.yaml"
echo "fetch.sh: vendored $mod@$version CRDs into $here" >&2
