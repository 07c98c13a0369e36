#!/usr/bin/env bash
# Builds the Prometheus Operator from the Go module proxy, at the version pinned in this
# directory's go.mod (kept equal to test/deploy/testdata/crds/VERSION, the vendored CRDs'
# release), and the Prometheus that operator release deploys by default (prometheus/go.mod),
# into a cache directory outside the repo, and prints that directory: bin/prometheus-operator,
# bin/prometheus, and crds/ with every CRD the release ships (the Prometheus CRD too, which the
# vendored pair lacks). internal/testenv/promoperator runs them against a test control plane.
#
# Prometheus is built rather than Debian's because Debian's has no Kubernetes service
# discovery (removed in its packaging), and discovery is what the operator's configuration
# uses. It is upstream's cmd/prometheus built from a copy of its module, with one file changed:
# plugins/plugins.go registers Kubernetes discovery only, the one mechanism the operator's
# configuration uses (file and HTTP discovery are registered elsewhere and stay). Dropping the
# other 22 skips the AWS v1, GCE compute, Docker, OpenStack and Scaleway SDKs, 224 of its
# 1,414 packages and the heaviest to compile. Built as the main module, it also uses
# upstream's own go.mod and its replace directive, as a release build does.
#
# As for the Kubernetes builds (hack/kube-binaries), the command is built by package path from
# a separate pinned module: the operator's own go.mod replaces two of its packages with
# directories its module zip lacks, so it cannot be built as a main module from the proxy.
#
# Usage: dir="$(hack/prometheus-operator/build.sh | tail -1)"
# Everything except the final dir goes to stderr.
#
# Environment:
#   LEASE_EXPORTER_CACHE  cache root (default: $HOME/.cache/lease-exporter)
#   FORCE_REBUILD=1       rebuild even when the binary exists
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
mod=github.com/prometheus-operator/prometheus-operator

# Never let a go.work elsewhere pull the main module into this build.
export GOWORK=off
export CGO_ENABLED=0

log() { echo "hack/prometheus-operator/build.sh: $*" >&2; }

# The version comes from go.mod, so bumping the pin lands in a new directory and therefore
# forces a rebuild.
version="$(go list -mod=readonly -m -f '{{.Version}}' "$mod")"
prom=github.com/prometheus/prometheus
# Prometheus tags release 3.Y.Z as module version v0.3YY.Z (v3.5.0 is v0.305.0), and 2.Y.Z as
# v0.Y.Z.
prom_mod_version="$(cd prometheus && go list -mod=readonly -m -f '{{.Version}}' "$prom")"
IFS=. read -r _ minor patch <<<"${prom_mod_version#v}"
if ((minor >= 300)); then prom_version="3.$((minor - 300)).$patch"; else prom_version="2.$minor.$patch"; fi

cache_root="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}"
dir="$cache_root/prometheus-operator/$version-prometheus-v$prom_version"
mkdir -p "$(dirname "$dir")"

# Locked per cache root, so concurrent callers (two test packages, deps.sh and a test) build
# once.
exec 9>"$(dirname "$dir")/.lock"
flock 9
if [[ "${FORCE_REBUILD:-}" != "1" && -x "$dir/bin/prometheus-operator" && -x "$dir/bin/prometheus" && -d "$dir/crds" ]]; then
	log "reusing $dir"
	echo "$dir"
	exit 0
fi

log "building prometheus-operator $version and prometheus $prom_version into $dir (cold: operator 9-11 CPU-min, Prometheus with Kubernetes discovery only less than its full 11)"
start=$(date +%s)
go mod download "$mod"
src="$(go list -mod=readonly -m -f '{{.Dir}}' "$mod")"
# Built in a scratch dir and renamed, so an interrupted build never leaves a half-filled dir
# that the check above would accept.
tmp="$(mktemp -d "$dir.tmp.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin" "$tmp/crds"
# Stamp what the operator's own Makefile stamps, so `--version` and its log say which it is.
ldflags="-s -w -X github.com/prometheus/common/version.Version=${version#v}"
ldflags+=" -X github.com/prometheus/common/version.Branch=HEAD -X github.com/prometheus/common/version.Revision=$version"
# Stripped (-s -w): -dwarf=false skips the debug info the linker would drop anyway (see
# hack/kube-binaries/build.sh).
go build -mod=readonly -trimpath -gcflags=all=-dwarf=false -ldflags "$ldflags" \
	-o "$tmp/bin/prometheus-operator" "$mod/cmd/operator"
pldflags="-s -w -X github.com/prometheus/common/version.Version=$prom_version"
pldflags+=" -X github.com/prometheus/common/version.Branch=HEAD -X github.com/prometheus/common/version.Revision=$prom_mod_version"
psrc="$(cd prometheus && go mod download "$prom" && go list -mod=readonly -m -f '{{.Dir}}' "$prom")"
cp -r "$psrc" "$tmp/prometheus-src"
chmod -R u+w "$tmp/prometheus-src"
cat >"$tmp/prometheus-src/plugins/plugins.go" <<'EOF'
// Rewritten by hack/prometheus-operator/build.sh: Kubernetes discovery only.

package plugins

import (
	// Register kubernetes plugin.
	_ "github.com/prometheus/prometheus/discovery/kubernetes"
)
EOF
(cd "$tmp/prometheus-src" && go build -mod=readonly -trimpath -gcflags=all=-dwarf=false -ldflags "$pldflags" \
	-o "$tmp/bin/prometheus" ./cmd/prometheus)
rm -rf "$tmp/prometheus-src"
cp "$src"/example/prometheus-operator-crd/*.yaml "$tmp/crds/"
chmod 644 "$tmp"/crds/*.yaml
echo "$version" >"$tmp/VERSION"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
log "built prometheus-operator $version and prometheus $prom_version in $(($(date +%s) - start))s"
echo "$dir"
