#!/usr/bin/env bash
# Builds crmanager (main.go here: a controller-runtime manager with leader election on, as an
# operator runs it) into the cache hack/tools/build.sh uses, for hack/detect and
# internal/testenv/election, which run it in a process of their own. Not part of
# hack/deps.sh: only they need it. Its own module (go.mod here), so controller-runtime never
# enters the exporter's go.mod. A cold build takes about four minutes on 2 cores (Kubernetes'
# client packages), a warm one is a no-op. Prints the binary's path as the last line of stdout.
#
# The stamp is a hash of main.go, go.mod and go.sum and the Go version: editing any of them
# rebuilds.
#
# To bump: cd hack/tools/crmanager && go get sigs.k8s.io/controller-runtime@vX.Y.Z && go mod tidy
# (it brings the k8s.io versions that release needs), then run the election test
# TestControllerRuntimeManagerLeadsAndReportsItsStatus.
#
# Environment:
#   LEASE_EXPORTER_CACHE  cache root (default: $HOME/.cache/lease-exporter)
#   FORCE_REBUILD=1       rebuild even when the binary exists
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
export GOWORK=off CGO_ENABLED=0
log() { echo "hack/tools/crmanager/build.sh: $*" >&2; }

version="$(go list -mod=readonly -m -f '{{.Version}}' sigs.k8s.io/controller-runtime)"
bin="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}/tools/bin"
mkdir -p "$bin"
exec 9>"$bin/../.crmanager.lock"
flock 9

want="$version $(go env GOVERSION) $(cat main.go go.mod go.sum | sha256sum | cut -d' ' -f1)"
out="$bin/crmanager"
if [[ "${FORCE_REBUILD:-}" != "1" && -x "$out" && "$(cat "$bin/.crmanager.stamp" 2>/dev/null)" == "$want" ]]; then
	log "reusing $out (controller-runtime $version)"
else
	log "building crmanager with controller-runtime $version into $bin (cold build: about four minutes on 2 cores)"
	start=$(date +%s)
	go build -mod=readonly -trimpath -ldflags "-s -w" -o "$bin/.crmanager.tmp" .
	mv -f "$bin/.crmanager.tmp" "$out"
	echo "$want" >"$bin/.crmanager.stamp"
	log "built in $(($(date +%s) - start))s"
fi
echo "$out"
