#!/usr/bin/env bash
# Builds kubectl lease's release archives for every platform krew offers it on and writes its
# krew manifest from them, then checks the manifest with krew's own validator
# (validate-krew-manifest, as krew-index's CI runs it): `make krew`.
#
# Usage: hack/krew/package.sh [DIST [MANIFEST]]
#   DIST      where the archives go, default dist/krew
#   MANIFEST  the manifest, default plugins/lease.yaml
#   VERSION   the release's version (environment), default hack/build.sh's (git describe)
# Both outputs are build outputs (.gitignore): the manifest names archives a release uploads.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
dist="$(mkdir -p "${1:-dist/krew}" && cd "${1:-dist/krew}" && pwd)"
manifest="${2:-plugins/lease.yaml}"
[[ "$manifest" == /* ]] || manifest="$root/$manifest"
if [[ -z "${VERSION:-}" ]]; then
	VERSION="$(git describe --tags --match 'v[0-9]*' 2>/dev/null || true)"
	VERSION="${VERSION#v}"
	VERSION="${VERSION:-0.0.0-g$(git rev-parse --short=12 HEAD)}"
fi
export VERSION

# archive and PLATFORMS: the release's own (hack/release/lib.sh).
source hack/release/lib.sh
for platform in $PLATFORMS; do
	os="${platform%/*}" arch="${platform#*/}"
	stage="$(mktemp -d)"
	GOOS="$os" GOARCH="$arch" hack/build.sh "$stage/kubectl-lease" kubectl-lease
	# The license travels with the binary (krew-index requires it), and the README with it.
	archive "$stage" kubectl-lease "$dist/kubectl-lease_${os}_${arch}.tar.gz"
	rm -rf "$stage"
done

cd hack/krew
GOWORK=off go run . -version "$VERSION" -dist "$dist" -out "$manifest"
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
GOWORK=off go build -o "$tools/validate-krew-manifest" sigs.k8s.io/krew/cmd/validate-krew-manifest
# -skip-install: its install step downloads each platform's URI, which exist once a release
# uploads them; test/krew installs the manifest from the local archive with krew itself.
"$tools/validate-krew-manifest" -manifest "$manifest" -skip-install
echo "hack/krew/package.sh: $manifest (v$VERSION) from $dist, validated by krew"
