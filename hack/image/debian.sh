#!/usr/bin/env bash
# Builds the Debian root both stand-in base images are made from: `debootstrap
# --variant=minbase` (bash, coreutils and tzdata; about 120 MB), from the mirror apt uses.
# Reused while its key (suite, mirror, recipe) holds; prints the image's name.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
need buildah debootstrap

mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
debian="localhost/lease-exporter/debian:$DEBIAN_SUITE-minbase"
key="recipe=$STANDIN_RECIPE suite=$DEBIAN_SUITE mirror=$mirror"

lock
if standin_current "$debian" "$key"; then
	log "reusing $debian"
	echo "$debian"
	exit 0
fi

log "building $debian: debootstrap --variant=minbase $DEBIAN_SUITE from $mirror (cold: ~1 min)"
start=$(date +%s)
ctr="$(buildah from --pull=never scratch)"
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
mnt="$(buildah mount "$ctr")"
debootstrap --variant=minbase "$DEBIAN_SUITE" "$mnt" "$mirror" >&2
# apt's downloads and lists are only weight in an image nobody runs apt in.
rm -rf "$mnt"/var/cache/apt/archives/*.deb "$mnt"/var/lib/apt/lists/*
buildah umount "$ctr" >/dev/null
buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	--cmd /bin/bash "$ctr"
buildah commit --quiet --rm "$ctr" "$debian" >/dev/null
standin_record "$debian" "$key"
trap - EXIT
log "built $debian in $(($(date +%s) - start))s"
echo "$debian"
