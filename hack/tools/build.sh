#!/usr/bin/env bash
# Builds the command-line tools the deploy tests need (helm, and actionlint for the
# GitHub Actions workflows) from the Go module proxy, at the versions pinned in this
# directory's go.mod, into a cache directory outside the repo, so a fresh CI clone on
# the same machine reuses it: a cold build takes a few minutes, a warm one is a no-op.
#
# Usage: HELM="$(hack/tools/build.sh | tail -1)/helm"
#    or: export PATH="$(hack/tools/build.sh | tail -1):$PATH"
#    or: hack/tools/build.sh release   the release tools instead (release/go.mod: cosign, the
#        CNCF distribution registry, cyclonedx-gomod, crane), for make release and its test;
#        cold, about 11 minutes on 2 cores (cosign alone 7), so only the release path builds them
# Everything except the final bin dir goes to stderr.
#
# The tools are the `tool` lines of go.mod. To bump helm (or actionlint, whose command is
# github.com/rhysd/actionlint/cmd/actionlint):
#   cd hack/tools && GOWORK=off go get -tool helm.sh/helm/v3/cmd/helm@vX.Y.Z && GOWORK=off go mod tidy
# (the next run rebuilds, since the version is part of the stamp).
#
# Environment:
#   LEASE_EXPORTER_CACHE  cache root (default: $HOME/.cache/lease-exporter)
#   FORCE_REBUILD=1       rebuild even when the binaries exist
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

# Never let a go.work elsewhere pull the main module into this build.
export GOWORK=off
export CGO_ENABLED=0

log() { echo "hack/tools/build.sh: $*" >&2; }

cache_root="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}"
bin="$cache_root/tools/bin"
mkdir -p "$bin"

# Serialise concurrent callers so two builds never race on the same file.
exec 9>"$cache_root/tools/.lock"
flock 9

modversion() { go list -mod=readonly -m -f '{{.Version}}' "$1"; }

# build NAME MODULE PACKAGE [LDFLAGS...]: builds PACKAGE (from MODULE, whose
# version comes from go.mod) as $bin/NAME unless the binary there was built
# from the same version with the same flags.
build() {
	local name="$1" mod="$2" pkg="$3" extra="${4:-}"
	local version
	version="$(modversion "$mod")"
	if [[ -z "$version" ]]; then
		log "cannot read the version of $mod from $here/go.mod"
		exit 1
	fi
	local ldflags="-s -w${extra:+ $extra}"
	local stamp="$bin/.$name.stamp"
	local want="$version $(go env GOVERSION) $ldflags"
	if [[ "${FORCE_REBUILD:-}" != "1" && -x "$bin/$name" && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
		log "reusing $bin/$name $version"
		return
	fi
	log "building $name $version into $bin (cold build: a few minutes on 2 cores)"
	local start
	start=$(date +%s)
	# Build to a temporary name and rename, so an interrupted build never
	# leaves a half-written binary that the check above would accept.
	# Stripped (-s -w): -dwarf=false skips the debug info the linker would drop anyway (15% of
	# the compile's CPU; see hack/kube-binaries/build.sh).
	go build -mod=readonly -trimpath -gcflags=all=-dwarf=false -ldflags "$ldflags" -o "$bin/.$name.tmp" "$pkg"
	mv -f "$bin/.$name.tmp" "$bin/$name"
	echo "$want" >"$stamp"
	log "built $name in $(($(date +%s) - start))s"
}

# helm: stamp what helm's own Makefile stamps: the release version, and the
# Kubernetes version that `helm template` and `helm lint` assume
# (.Capabilities.KubeVersion, deprecation checks), which helm derives from its
# client-go: v0.N.x -> 1.N. Unstamped, helm would assume Kubernetes 1.20.
helm_version="$(modversion helm.sh/helm/v3)"
k8s_minor="$(modversion k8s.io/client-go | cut -d. -f2)"
helm_ldflags="-X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
	helm_ldflags+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$k8s_minor"
done
if [[ "${1:-}" == release ]]; then
	cd "$here/release"
	build cosign github.com/sigstore/cosign/v2 github.com/sigstore/cosign/v2/cmd/cosign \
		"-X sigs.k8s.io/release-utils/version.gitVersion=$(modversion github.com/sigstore/cosign/v2)"
	build registry github.com/distribution/distribution/v3 github.com/distribution/distribution/v3/cmd/registry \
		"-X github.com/distribution/distribution/v3/version.version=$(modversion github.com/distribution/distribution/v3)"
	build cyclonedx-gomod github.com/CycloneDX/cyclonedx-gomod github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod
	build crane github.com/google/go-containerregistry github.com/google/go-containerregistry/cmd/crane
	echo "$bin"
	exit 0
fi

build helm helm.sh/helm/v3 helm.sh/helm/v3/cmd/helm "$helm_ldflags"

# actionlint: stamp the version as its release binaries do (its .goreleaser.yaml: X.Y.Z, no
# "v"), so `actionlint -version` names it instead of "unknown".
build actionlint github.com/rhysd/actionlint github.com/rhysd/actionlint/cmd/actionlint "-X github.com/rhysd/actionlint.version=$(modversion github.com/rhysd/actionlint | sed 's/^v//')"

echo "$bin"
