#!/usr/bin/env bash
# Builds kube-apiserver, kube-scheduler, kube-controller-manager and kubectl
# from k8s.io/kubernetes (pinned in this directory's go.mod) into a cache
# directory outside the repo, and links Debian's etcd next to them, so the
# directory can be used as KUBEBUILDER_ASSETS.
#
# The cache lives outside the work tree so a fresh CI clone on the same
# machine reuses it: a cold build takes minutes, a warm one is a no-op.
#
# Usage: KUBEBUILDER_ASSETS=$(hack/controlplane/build.sh | tail -1)
# Everything except the final bin dir goes to stderr.
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

log() { echo "build.sh: $*" >&2; }

# The version comes from go.mod so that bumping the pin lands in a new
# directory and therefore forces a rebuild.
version="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
if [[ -z "$version" ]]; then
	log "cannot read the k8s.io/kubernetes version from $here/go.mod"
	exit 1
fi

cache_root="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}"
base="$cache_root/controlplane/$version"
bin="$base/bin"
mkdir -p "$base"

binaries=(kube-apiserver kube-scheduler kube-controller-manager kubectl)

# Serialise concurrent callers (e.g. `make demo` and a test run) so that two
# builds never race on the same directory or burn both cores twice.
exec 9>"$base/.lock"
flock 9

have_all() {
	local b
	for b in "${binaries[@]}"; do
		[[ -x "$bin/$b" ]] || return 1
	done
}

if [[ "${FORCE_REBUILD:-}" == "1" ]] || ! have_all; then
	log "building Kubernetes $version control plane into $bin (cold: ~8 min on 2 cores)"
	start=$(date +%s)
	# Build into a scratch dir and rename it, so an interrupted build never
	# leaves a half-populated bin dir that the check above would accept.
	tmp="$(mktemp -d "$base/bin.tmp.XXXXXX")"
	chmod 755 "$tmp"
	trap 'rm -rf "$tmp"' EXIT

	minor="${version#v1.}"
	minor="${minor%%.*}"
	# Stamp the real version so /version and kubectl report v1.x.y instead of
	# the v0.0.0-master default of an unstamped build.
	ldflags="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
		ldflags+=" -X $pkg.gitTreeState=clean"
	done

	pkgs=()
	for b in "${binaries[@]}"; do
		pkgs+=("k8s.io/kubernetes/cmd/$b")
	done
	go build -mod=readonly -trimpath -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}"

	# Keep any etcd link from a previous (partial) run; it is recreated below.
	rm -rf "$bin"
	mv "$tmp" "$bin"
	trap - EXIT
	log "built in $(($(date +%s) - start))s"
else
	log "reusing $bin"
fi

# etcd is not built from source: Debian ships it, and envtest only needs a
# binary called etcd in the same directory.
if ! command -v etcd >/dev/null 2>&1; then
	log "etcd not found; installing Debian's etcd-server"
	sudo=""
	if [[ "$(id -u)" != 0 ]]; then
		sudo="sudo"
	fi
	$sudo apt-get update >&2
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends etcd-server >&2
	# The package starts a system etcd on :2379; the harness runs its own on
	# free ports, so the service would only hold ports and memory.
	$sudo systemctl disable --now etcd >/dev/null 2>&1 || $sudo service etcd stop >/dev/null 2>&1 || true
fi
etcd_path="$(command -v etcd)"
# Relink only on change: a running test may be exec'ing the link right now.
if [[ "$(readlink "$bin/etcd" 2>/dev/null)" != "$etcd_path" ]]; then
	ln -sfn "$etcd_path" "$bin/etcd"
fi

echo "$bin"
