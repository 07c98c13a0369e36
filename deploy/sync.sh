#!/usr/bin/env bash
# Copies the files the deploy manifests need from the rendering of their single source, the
# mixin (mixin/, rendered by `make generate`), because neither kustomize nor Helm can read files
# outside their own directory:
#   dashboards/*.json                           -> deploy/kustomize/components/prometheus-operator/dashboards/
#                                               -> deploy/helm/lease-exporter/dashboards/
#   deploy/kustomize/prometheus-operator/prometheusrule.yaml
#                                               -> deploy/helm/lease-exporter/files/prometheusrule.yaml
# `make generate` runs it after rendering the mixin and the PrometheusRule.
# test/deploy (TestCopiesInSync) fails while a copy differs from its source.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

for dst in deploy/kustomize/components/prometheus-operator/dashboards deploy/helm/lease-exporter/dashboards; do
	mkdir -p "$dst"
	rm -f "$dst"/*.json
	cp dashboards/*.json "$dst/"
done
mkdir -p deploy/helm/lease-exporter/files
cp deploy/kustomize/prometheus-operator/prometheusrule.yaml deploy/helm/lease-exporter/files/prometheusrule.yaml
echo "deploy/sync.sh: copied $(ls dashboards/*.json | wc -l) dashboards and the PrometheusRule" >&2
