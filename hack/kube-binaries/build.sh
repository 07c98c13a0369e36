#!/usr/bin/env bash
# Builds a local Kubernetes control plane from the Go module proxy: etcd (pinned in etcd/go.mod)
# and the Kubernetes commands named in k8s-<minor>/tools.go (pinned in k8s-<minor>/go.mod), into
# a cache directory outside the repo, and prints a bin dir holding all of them, usable as
# KUBEBUILDER_ASSETS.
#
# The cache lives outside the work tree so a fresh CI clone on the same machine reuses it: a
# cold build takes minutes, a warm one is a no-op.
#
# Usage: KUBEBUILDER_ASSETS=$(hack/kube-binaries/build.sh [MINOR] | tail -1)
#   MINOR  1.36 (default: what the tests, the demo and the benchmark run on), or another
#          pinned k8s-<minor>/ of the test matrix (1.35, 1.34); see README.md.
# Everything except the final bin dir goes to stderr.
#
# Environment:
#   LEASE_EXPORTER_CACHE  cache root (default: $HOME/.cache/lease-exporter)
#   FORCE_REBUILD=1       rebuild even when the binaries exist
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
minor="${1:-1.36}"

# Never let a go.work elsewhere pull the main module into these builds.
export GOWORK=off
export CGO_ENABLED=0

log() { echo "hack/kube-binaries/build.sh: $*" >&2; }

mod="$here/k8s-$minor"
if [[ ! -f "$mod/go.mod" ]]; then
	log "no Kubernetes $minor pinned (no $mod/go.mod); pinned: $(cd "$here" && ls -d k8s-* | sed 's/^k8s-//' | tr '\n' ' ')"
	exit 2
fi
cache_root="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}"

# build_into DIR LABEL LDFLAGS PACKAGE...: builds the packages into DIR (binaries named as in
# the array names, one per package) unless every one is already there. Locked per version
# (DIR/../.lock), so concurrent callers (`make demo` next to a test run) build once; built in a
# scratch dir and renamed, so an interrupted build never leaves a half-filled DIR that the
# check would accept.
build_into() {
	local dir="$1" label="$2" ldflags="$3"
	shift 3
	local name missing=0 out
	mkdir -p "$(dirname "$dir")"
	exec 9>"$(dirname "$dir")/.lock"
	flock 9
	for name in "${names[@]}"; do
		[[ -x "$dir/$name" ]] || missing=1
	done
	if [[ "${FORCE_REBUILD:-}" != "1" && $missing == 0 ]]; then
		log "reusing $dir ($label)"
		exec 9>&-
		return
	fi
	log "building $label into $dir"
	local start tmp
	start=$(date +%s)
	tmp="$(mktemp -d "$dir.tmp.XXXXXX")"
	chmod 755 "$tmp"
	trap 'rm -rf "$tmp"' EXIT
	out="$tmp/"
	(($# == 1)) && out="$tmp/${names[0]}"
	# The binaries are stripped (-s -w), so the compiler's debug info would be thrown away:
	# -dwarf=false skips making it, 15% of the build's CPU (kube-scheduler 1.34 cold: 302
	# instead of 354 CPU-seconds).
	go build -mod=readonly -trimpath -gcflags=all=-dwarf=false -ldflags "$ldflags" -o "$out" "$@"
	# An older dir may hold links (etcd) next to the binaries; they are made again below.
	rm -rf "$dir"
	mv "$tmp" "$dir"
	trap - EXIT
	log "built $label in $(($(date +%s) - start))s"
	exec 9>&-
}

# etcd: the server module's main package is etcd's own `etcd` command (etcd's release build
# compiles the same package); its version constant comes with the module.
etcd_version="$(cd "$here/etcd" && go list -mod=readonly -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
etcd_bin="$cache_root/kube-binaries/etcd-$etcd_version/bin"
names=(etcd)
(cd "$here/etcd" && build_into "$etcd_bin" "etcd $etcd_version (cold: ~1 min on 2 cores)" "-s -w" go.etcd.io/etcd/server/v3)

# Kubernetes: the version comes from go.mod, so bumping the pin lands in a new directory and
# therefore forces a rebuild.
version="$(cd "$mod" && go list -mod=readonly -m -f '{{.Version}}' k8s.io/kubernetes)"
bin="$cache_root/kube-binaries/kubernetes-$version/bin"
mapfile -t cmds < <(grep -o '"k8s.io/kubernetes/cmd/[a-z-]*"' "$mod/tools.go" | tr -d '"')
names=("${cmds[@]##*/}")
# Stamp the real version so /version and kubectl report v1.x.y instead of the v0.0.0-master
# default of an unstamped build.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=${minor#1.}"
	ldflags+=" -X $pkg.gitTreeState=clean"
done
(cd "$mod" && build_into "$bin" "Kubernetes $version: ${names[*]} (cold: 4-8 min on 2 cores)" "$ldflags" "${cmds[@]}")

# etcd next to them, so the dir works as KUBEBUILDER_ASSETS. Relink only on change: a running
# test may be exec'ing the link right now.
if [[ "$(readlink "$bin/etcd" 2>/dev/null)" != "$etcd_bin/etcd" ]]; then
	ln -sfn "$etcd_bin/etcd" "$bin/etcd"
fi
echo "$bin"
