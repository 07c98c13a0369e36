#!/usr/bin/env bash
# Builds kube-state-metrics (the `tool` line of this directory's go.mod) from the Go module
# proxy into the cache hack/tools/build.sh uses, for hack/bench's -prometheus mode, which
# measures what kube-state-metrics' two series per Lease cost a Prometheus. Not part of
# hack/deps.sh: only that benchmark needs it. A cold build takes a few minutes on 2 cores,
# a warm one is a no-op. Prints the binary's path as the last line of stdout.
#
# To bump: cd hack/tools/ksm && go get -tool k8s.io/kube-state-metrics/v2@vX.Y.Z && go mod tidy
#
# Environment:
#   LEASE_EXPORTER_CACHE  cache root (default: $HOME/.cache/lease-exporter)
#   FORCE_REBUILD=1       rebuild even when the binary exists
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
export GOWORK=off CGO_ENABLED=0
log() { echo "hack/tools/ksm/build.sh: $*" >&2; }

mod=k8s.io/kube-state-metrics/v2
version="$(go list -mod=readonly -m -f '{{.Version}}' "$mod")"
clientgo="$(go list -mod=readonly -m -f '{{.Version}}' k8s.io/client-go)"
bin="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}/tools/bin"
mkdir -p "$bin"
exec 9>"$bin/../.ksm.lock"
flock 9

# Stamped as kube-state-metrics' own Makefile stamps a release.
ldflags="-s -w -X github.com/prometheus/common/version.Version=$version -X $mod/pkg/app.ClientGoVersion=$clientgo"
want="$version $(go env GOVERSION) $ldflags"
out="$bin/kube-state-metrics"
if [[ "${FORCE_REBUILD:-}" != "1" && -x "$out" && "$(cat "$bin/.kube-state-metrics.stamp" 2>/dev/null)" == "$want" ]]; then
	log "reusing $out $version"
else
	log "building kube-state-metrics $version into $bin (cold build: a few minutes on 2 cores)"
	start=$(date +%s)
	go build -mod=readonly -trimpath -ldflags "$ldflags" -o "$bin/.kube-state-metrics.tmp" "$mod"
	mv -f "$bin/.kube-state-metrics.tmp" "$out"
	echo "$want" >"$bin/.kube-state-metrics.stamp"
	log "built in $(($(date +%s) - start))s"
fi
echo "$out"
