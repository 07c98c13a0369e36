#!/usr/bin/env bash
# Installs what the tests and the demo need on a bare Debian machine, and prints the
# control-plane bin dir (usable as KUBEBUILDER_ASSETS) as the last line of stdout.
# Safe to run repeatedly: each step is skipped when its result is already there.
#
# Usage: hack/deps.sh [demo]
#   demo  only what `make demo` needs: no helm (the deploy and node tests use it).
# The other test-only builds, the Prometheus Operator with its Prometheus, and Thanos, are not
# here: `make test` starts them beside the tests at the lowest CPU priority, and the tests that
# need them run their build scripts, which wait for that build (or build, when run alone).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-test}"
if [[ "$mode" != test && "$mode" != demo ]]; then
	echo "usage: hack/deps.sh [demo]" >&2
	exit 2
fi

# helm (pinned in hack/tools/go.mod, for the deploy tests) and the control plane build while
# the Debian packages install: one downloads from Debian, the others from the Go module proxy,
# and each compiles while the other waits on the network. Each build is locked and cached, so
# concurrent callers (`make demo` beside `make test`) build once.
out="$(mktemp)"
# (rm first: under set -e a failing command in the trap ends it, and kill fails with no jobs.)
trap 'rm -f "$out"; kill $(jobs -p) 2>/dev/null || true' EXIT
helm=
if [[ "$mode" == test ]]; then
	"$root/hack/tools/build.sh" >&2 &
	helm=$!
fi
# --- kube-binaries (issue 14): etcd, kube-apiserver, kube-scheduler, kube-controller-manager
# and kubectl 1.36, built from the Go module proxy into a cache outside the work tree (minutes
# cold, a no-op warm). `hack/kube-binaries/build.sh 1.35` etc. build the test matrix's others.
"$root/hack/kube-binaries/build.sh" >"$out" &
kube=$!
# --- end kube-binaries

# Debian packages: real Prometheus, promtool and Alertmanager for rule tests and end-to-end
# alerting. (etcd is not Debian's: hack/kube-binaries builds the one Kubernetes ships with.)
need=()
command -v promtool >/dev/null || need+=(prometheus)
command -v prometheus-alertmanager >/dev/null || command -v alertmanager >/dev/null || need+=(prometheus-alertmanager)
if ((${#need[@]})); then
	echo "deps: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
	# The packages start system services we do not want holding ports; tests start their own.
	for svc in prometheus prometheus-alertmanager prometheus-node-exporter etcd; do
		systemctl disable --now "$svc" >/dev/null 2>&1 || service "$svc" stop >/dev/null 2>&1 || true
	done
fi

# The rest only the tests need, not `make demo`.
if [[ "$mode" == test ]]; then
	# >>> python electors (internal/testenv/election): Debian's python3-kubernetes, imported by
	# /usr/bin/python3 (not a pyenv python3 on PATH), and faketime for electors with skewed clocks.
	pyneed=()
	/usr/bin/python3 -c 'import kubernetes.leaderelection.leaderelection' >/dev/null 2>&1 || pyneed+=(python3-kubernetes)
	command -v faketime >/dev/null || pyneed+=(faketime)
	if ((${#pyneed[@]})); then
		echo "deps: installing ${pyneed[*]}" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		apt-get install -y -qq --no-install-recommends "${pyneed[@]}" >&2
	fi
	# <<< python electors

	# >>> chromium: the status page's browser test (test/integration/browser_test.go) drives
	# Debian's headless Chromium.
	if ! command -v chromium >/dev/null; then
		echo "deps: installing chromium" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		apt-get install -y -qq --no-install-recommends chromium >&2
	fi
	# <<< chromium

	# >>> image (issue 27): buildah builds the Dockerfile (test/image), runc runs its RUN steps,
	# debootstrap makes the Debian root of the Go builder stand-in (hack/image/README.md), and
	# test/image imports the result into a containerd (1.6) of its own.
	imgneed=()
	for c in buildah runc debootstrap containerd; do command -v "$c" >/dev/null || imgneed+=("$c"); done
	if ((${#imgneed[@]})); then
		echo "deps: installing ${imgneed[*]}" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		apt-get install -y -qq --no-install-recommends "${imgneed[@]}" >&2
	fi
	# <<< image
fi

[[ -z "$helm" ]] || wait "$helm"
wait "$kube"
tail -1 "$out"
