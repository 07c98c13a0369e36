#!/usr/bin/env bash
# Builds Thanos (query and sidecar, one binary) for test/thanos, the mixin's proof on a
# distributed query layer, into a cache directory outside the repo, and prints its bin dir as
# the last line of stdout. Cold: 573 CPU-seconds (415 s user + 158 s sys, 777 s wall on the
# busy 2-core machine, modules already downloaded; docs/mixin.md); warm: a no-op.
#
# Thanos is Apache-2.0 Go on the module proxy, but only builds inside its own module with the
# module's replace directives (as a plain dependency it fails to compile), so, like a release
# build: download the module, copy it out of the read-only module cache, `go build ./cmd/thanos`
# inside it. v0.42.5, the newest release the proxy serves, wants Go 1.26.10, newer than this
# repository's (go.mod); v0.42.0 is the one proven here (v0.42.1 to v0.42.4 ask for Go 1.26.0
# too, but were not built).
#
# The build tags are the release's (.promu.yml: netgo, slicelabels), and slicelabels is not
# optional: since v0.40 Thanos depends on a Prometheus whose labels.Labels is a string by
# default, while its pkg/store/labelpb converts labels.Labels to []ZLabel by reinterpreting the
# memory (ZLabelsFromPromLabels), which is only right for the slice layout. Without the tag the
# sidecar's first Info reply has garbage label sizes and panics in extgrpc's codec ("makeslice:
# len out of range" or "index out of range [64]" in gRPC's buffer pool), as builds without tags
# did here.
#
# Usage: PATH="$(hack/thanos/build.sh | tail -1):$PATH"
# Environment:
#   LEASE_EXPORTER_CACHE  cache root (default: $HOME/.cache/lease-exporter)
#   FORCE_REBUILD=1       rebuild even when the binary exists
set -euo pipefail

version=v0.42.0
tags=netgo,slicelabels
export GOWORK=off CGO_ENABLED=0 GOFLAGS=-buildvcs=false

log() { echo "hack/thanos/build.sh: $*" >&2; }

cache_root="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}"
# The tags are in the path: a binary built without them is not reused.
bin="$cache_root/thanos/thanos-$version-${tags//,/-}/bin"
mkdir -p "$cache_root/thanos"
# Serialise concurrent callers so two builds never race on the same directory.
exec 9>"$cache_root/thanos/.lock"
flock 9
if [[ "${FORCE_REBUILD:-}" != "1" && -x "$bin/thanos" ]]; then
	log "reusing $bin/thanos $version"
	echo "$bin"
	exit 0
fi

log "building thanos $version into $bin (cold: ~10 min on 2 cores)"
start=$(date +%s)
tmp="$(mktemp -d "$cache_root/thanos/build.XXXXXX")"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# `go mod download` needs no module of its own; -json names the extracted directory.
src="$(cd "$tmp" && go mod download -json "github.com/thanos-io/thanos@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ ! -f "$src/go.mod" ]]; then
	log "go mod download github.com/thanos-io/thanos@$version gave no module directory"
	exit 1
fi
cp -r "$src" "$tmp/src"
chmod -R u+w "$tmp/src"
# Stamped as Thanos' Makefile stamps it, so /api/v1/status/buildinfo reports the release.
ldflags="-s -w -X github.com/prometheus/common/version.Version=${version#v} -X github.com/prometheus/common/version.Branch=release"
# -mod=mod: the module's go.sum lists its own requirements, but not every module its replace
# directives bring in; the module proxy and checksum database fill those in.
(cd "$tmp/src" && go build -mod=mod -tags "$tags" -trimpath -gcflags=all=-dwarf=false -ldflags "$ldflags" -o "$tmp/bin/thanos" ./cmd/thanos)
rm -rf "$bin"
mkdir -p "$(dirname "$bin")"
mv "$tmp/bin" "$bin"
log "built thanos $version in $(($(date +%s) - start))s"
echo "$bin"
