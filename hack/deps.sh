#!/usr/bin/env bash
# Installs what the tests and the demo need on a bare Debian machine, and prints the
# control-plane bin dir (usable as KUBEBUILDER_ASSETS) as the last line of stdout.
# Safe to run repeatedly: each step is skipped when its result is already there.
#
# Usage: hack/deps.sh [demo|test|release]
#   demo     only what `make demo` needs: the Debian packages it runs and Kubernetes 1.36.
#   test     (default) what `make test` needs: demo's, plus helm, the Python electors, faketime,
#            Chromium, Node.js (dashcheck), and actionlint with shellcheck (the GitHub workflows).
#   release  what `make test-release` needs too: the image build (buildah, runc, debootstrap)
#            and the one-node cluster (containerd, iptables, nftables, conntrack, the CNI
#            plugins). The release suites' own builds (the Prometheus Operator with its
#            Prometheus, Thanos, Kubernetes 1.35 and 1.34) are their scripts' under hack/,
#            which the suites run (a no-op once cached) and `make test-release` starts early.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-test}"
case "$mode" in
demo | test | release) ;;
*)
	echo "usage: hack/deps.sh [demo|test|release]" >&2
	exit 2
	;;
esac

# helm and actionlint (pinned in hack/tools/go.mod, for the deploy tests) and the control plane
# build while the Debian packages install: one downloads from Debian, the others from the Go
# module proxy, and each compiles while the other waits on the network. Each build is locked and
# cached, so concurrent callers (`make demo` beside `make test`) build once.
out="$(mktemp)"
# (rm first: under set -e a failing command in the trap ends it, and kill fails with no jobs.)
trap 'rm -f "$out"; kill $(jobs -p) 2>/dev/null || true' EXIT
helm=
if [[ "$mode" != demo ]]; then
	"$root/hack/tools/build.sh" >&2 &
	helm=$!
fi
# --- kube-binaries (issue 14): etcd, kube-apiserver, kube-scheduler, kube-controller-manager,
# kubectl, kubelet and kube-proxy 1.36, built from the Go module proxy into a cache outside the
# work tree (minutes cold, a no-op warm). `hack/kube-binaries/build.sh 1.35` etc. build the
# test matrix's others.
"$root/hack/kube-binaries/build.sh" >"$out" &
kube=$!
# --- end kube-binaries

# apt_need PACKAGE COMMAND...: PACKAGE is needed unless every COMMAND is on PATH.
need=()
apt_need() {
	local pkg="$1" c
	shift
	for c in "$@"; do
		if ! command -v "$c" >/dev/null; then
			need+=("$pkg")
			return
		fi
	done
}

# Real Prometheus, promtool and Alertmanager for rule tests and end-to-end alerting. (etcd is
# not Debian's: hack/kube-binaries builds the one Kubernetes ships with.)
apt_need prometheus prometheus promtool
command -v prometheus-alertmanager >/dev/null || command -v alertmanager >/dev/null || need+=(prometheus-alertmanager)
if [[ "$mode" != demo ]]; then
	# The Python electors (internal/testenv/election): Debian's python3-kubernetes, imported
	# by /usr/bin/python3 (not a pyenv python3 on PATH), and faketime for skewed clocks.
	/usr/bin/python3 -c 'import kubernetes.leaderelection.leaderelection' >/dev/null 2>&1 || need+=(python3-kubernetes)
	apt_need faketime faketime
	# The status page's browser test (test/integration/browser_test.go) drives headless
	# Chromium.
	apt_need chromium chromium
	# dashcheck (hack/dashcheck) runs TypeScript against @grafana/schema on Node.js 20 or newer
	# (its package.json's engines): the nodejs the machine's apt sources offer.
	node_major="$(node --version 2>/dev/null | sed -n 's/^v\([0-9]*\)\..*/\1/p')"
	((${node_major:-0} >= 20)) || need+=(nodejs)
	# actionlint (test/deploy's TestWorkflowsPassActionlint) runs shellcheck on the workflows'
	# run: scripts.
	apt_need shellcheck shellcheck
fi
if [[ "$mode" == release ]]; then
	# The image (test/image): buildah builds the Dockerfile, runc runs its RUN steps,
	# debootstrap makes the Debian root of the Go builder stand-in (hack/image/README.md).
	apt_need buildah buildah
	apt_need runc runc
	apt_need debootstrap debootstrap
	# The one-node cluster (internal/testenv/node): containerd runs the Pods (test/image
	# imports the image into one of its own too), the CNI bridge plugin gives them their
	# network, kube-proxy and the kubelet program iptables and conntrack, and the node's
	# teardown lists and deletes nftables tables.
	apt_need containerd containerd ctr
	apt_need containernetworking-plugins /usr/lib/cni/bridge /usr/lib/cni/host-local /usr/lib/cni/loopback
	apt_need iptables iptables iptables-save iptables-restore ip6tables-save ip6tables-restore
	apt_need nftables nft
	apt_need conntrack conntrack
	apt_need iproute2 ip
fi
if ((${#need[@]})); then
	echo "deps: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
	# The packages just installed may start system services we do not want holding ports or
	# state; tests start their own.
	for svc in prometheus prometheus-node-exporter prometheus-alertmanager containerd; do
		[[ " ${need[*]} " == *" ${svc%-node-exporter} "* ]] || continue
		systemctl disable --now "$svc" >/dev/null 2>&1 || service "$svc" stop >/dev/null 2>&1 || true
	done
fi
if [[ "$mode" != demo ]]; then
	node_major="$(node --version 2>/dev/null | sed -n 's/^v\([0-9]*\)\..*/\1/p')"
	if ((${node_major:-0} < 20)); then
		echo "deps: dashcheck needs Node.js 20 or newer, and apt installed $(node --version 2>/dev/null || echo none): add an apt source that has it (NodeSource's node_20.x)" >&2
		exit 1
	fi
fi

[[ -z "$helm" ]] || wait "$helm"
wait "$kube"
tail -1 "$out"
