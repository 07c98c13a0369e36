#!/usr/bin/env bash
# Measures both test tiers as a new contributor's bare machine runs them (docs/compatibility.md,
# "What it costs"): a fresh clone of HEAD, an empty HOME (no Go module or build cache, no npm
# cache, no ~/.cache/lease-exporter; only the machine's Go, npm and git settings), buildah's storage moved aside, and the Debian packages hack/deps.sh
# installs purged first. Then `make test`, then `make test-release` on the same machine, each
# under /usr/bin/time -v, every output line stamped with the seconds since that tier started.
#
# It changes this machine: it purges those packages (hack/deps.sh installs them again) and
# moves /var/lib/containers aside (restored at the end, the run's own storage deleted). Root
# only, and only on a machine that is for this.
#
# Usage: hack/bare/measure.sh OUTDIR [test|release|both]
#   OUTDIR receives test.log, release.log (stamped output), test.time, release.time
#   (/usr/bin/time -v) and the clone (OUTDIR/clone, kept for reading the logs it left).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: hack/bare/measure.sh OUTDIR [test|release|both]}"
tiers="${2:-both}"
[[ "$(id -u)" == 0 ]] || { echo "hack/bare/measure.sh: root only (it purges packages)" >&2; exit 2; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# Every package hack/deps.sh may install that a bare Debian image does not have.
packages=(prometheus prometheus-alertmanager python3-kubernetes faketime chromium buildah runc
	debootstrap containerd containernetworking-plugins nftables conntrack)

if [[ "$tiers" != release ]]; then
	export DEBIAN_FRONTEND=noninteractive
	installed=()
	for p in "${packages[@]}"; do
		dpkg -s "$p" >/dev/null 2>&1 && installed+=("$p")
	done
	if ((${#installed[@]})); then
		echo "measure: purging ${installed[*]}"
		apt-get purge -y -qq "${installed[@]}" >/dev/null
		apt-get autoremove --purge -y -qq >/dev/null
	fi
	apt-get clean
fi

aside=
if [[ -d /var/lib/containers && "$tiers" != release ]]; then
	aside="/var/lib/containers.before-measure.$$"
	mv /var/lib/containers "$aside"
	echo "measure: buildah's storage moved to $aside"
fi
restore() {
	if [[ -n "$aside" ]]; then
		# buildah may still hold mounts in the run's storage: unmount them before deleting it.
		grep -o ' /var/lib/containers/[^ ]*' /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
		rm -rf /var/lib/containers
		mv "$aside" /var/lib/containers
		echo "measure: buildah's storage restored"
	fi
}
trap restore EXIT

home="$out/home"
if [[ "$tiers" != release ]]; then
	rm -rf "$home" "$out/clone"
	git clone --quiet "$root" "$out/clone"
fi
mkdir -p "$home/.config"
# The machine's configuration comes along (Go's env file, npm's and git's settings); its
# caches do not.
for f in .gitconfig .npmrc .config/go; do
	[[ -e "$HOME/$f" && ! -e "$home/$f" ]] && cp -r "$HOME/$f" "$home/$f"
done

# stamp: prefixes each line with the seconds since the tier started.
stamp() {
	local start line
	start=$(date +%s)
	while IFS= read -r line; do
		printf '%5d %s\n' "$(($(date +%s) - start))" "$line"
	done
}

run_tier() {
	local name="$1" target="$2" rc=0
	echo "measure: make $target (log $out/$name.log)"
	(cd "$out/clone" && env -i HOME="$home" PATH="/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		TERM=dumb LANG=C.UTF-8 /usr/bin/time -v -o "$out/$name.time" make "$target" 2>&1) | stamp >"$out/$name.log" || rc=$?
	echo "measure: make $target exited $rc after $(tail -1 "$out/$name.log" | cut -c1-5 | tr -d ' ') s"
	grep -E 'Elapsed|User time|System time|Maximum resident' "$out/$name.time" || true
	return "$rc"
}

rc=0
if [[ "$tiers" != release ]]; then
	run_tier test test || rc=1
fi
if [[ "$tiers" != test && $rc == 0 ]]; then
	run_tier release test-release || rc=1
fi
exit "$rc"
