#!/usr/bin/env bash
# Installs what the tests and the demo need on a bare Debian machine, and prints the
# control-plane bin dir (usable as KUBEBUILDER_ASSETS) as the last line of stdout.
# Safe to run repeatedly: each step is skipped when its result is already there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages: real Prometheus, promtool and Alertmanager for rule tests and end-to-end
# alerting, etcd for the local control plane.
need=()
command -v promtool >/dev/null || need+=(prometheus)
command -v prometheus-alertmanager >/dev/null || command -v alertmanager >/dev/null || need+=(prometheus-alertmanager)
command -v etcd >/dev/null || need+=(etcd-server)
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

# helm, pinned in hack/tools/go.mod, for the deploy tests.
"$root/hack/tools/build.sh" >&2

# kube-apiserver, kube-scheduler, kube-controller-manager and kubectl, built from the Go
# module proxy into a cache outside the work tree (minutes cold, a no-op warm).
"$root/hack/controlplane/build.sh" | tail -1
