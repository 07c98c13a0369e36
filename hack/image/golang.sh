#!/usr/bin/env bash
# Builds the stand-in for the Dockerfile's Go builder image (golang:1.26), which cannot be
# pulled here: the Debian root of debian.sh (bash and coreutils, what hack/build.sh needs),
# the host's Go toolchain at /usr/local/go, and the host's CA bundle so `go mod download`
# reaches the module proxy as the host does (the host's GOPROXY and GOSUMDB are set too).
# Laid out like the official golang image: GOPATH /go, so the Dockerfile's cache mount on
# /go/pkg/mod is the module cache, and GOTOOLCHAIN=local. Reused while its key (Go version,
# Go settings, CA bundle, Debian root) holds, so only a Go upgrade rebuilds it, without
# running debootstrap again. Prints the image's name, for `--build-arg GO_IMAGE=...`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
need buildah go

debian="$("$here/debian.sh" | tail -1)"
goroot="$(go env GOROOT)"
goversion="$(go env GOVERSION)"
ca="$(host_ca_bundle)"
golang="localhost/lease-exporter/golang:${goversion#go}-$DEBIAN_SUITE"
key="recipe=$STANDIN_RECIPE base=$(image_id "$debian") go=$goversion $(host_go_env | tr '\n' ' ')ca=$(sha256sum <"$ca" | cut -c1-16)"

lock
if standin_current "$golang" "$key"; then
	log "reusing $golang"
	echo "$golang"
	exit 0
fi

log "building $golang: $debian + $goroot ($goversion) + $ca"
start=$(date +%s)
ctr="$(buildah from --pull=never "$debian")"
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
mnt="$(buildah mount "$ctr")"
mkdir -p "$mnt/usr/local" "$mnt/etc/ssl/certs" "$mnt/go/bin" "$mnt/go/src"
cp -a "$goroot" "$mnt/usr/local/go"
cp "$ca" "$mnt/etc/ssl/certs/ca-certificates.crt"
buildah umount "$ctr" >/dev/null
envs=(--env GOPATH=/go --env GOTOOLCHAIN=local
	--env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
while IFS= read -r kv; do
	[[ -z "${kv#*=}" ]] || envs+=(--env "$kv")
done < <(host_go_env)
buildah config "${envs[@]}" --workingdir /go --cmd /bin/bash "$ctr"
buildah commit --quiet --rm "$ctr" "$golang" >/dev/null
standin_record "$golang" "$key"
trap - EXIT
log "built $golang in $(($(date +%s) - start))s"
echo "$golang"
