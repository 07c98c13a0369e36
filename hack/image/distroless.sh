#!/usr/bin/env bash
# Builds the stand-in for the Dockerfile's runtime base, gcr.io/distroless/static-debian12:nonroot,
# which cannot be pulled here, and commits it under a local name of its own, which build.sh
# passes as the Dockerfile's BASE_IMAGE. Never under the real image's name: a later build on
# this machine that can pull would otherwise find the stand-in in place of distroless.
# Like distroless static: from scratch, no shell, no libc, no package manager; /etc/passwd
# and /etc/group with root, nobody and nonroot (65532), a home and /tmp, CA certificates
# (the host's bundle) and Debian's tzdata (from debian.sh's root), and distroless' config:
# user 65532, workdir /home/nonroot, PATH and SSL_CERT_FILE.
# Reused while its key holds; prints the image's name.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
need buildah

name="localhost/lease-exporter/distroless-static:nonroot"
# Earlier versions of this script committed the stand-in as the real image: remove that one, if it is ours
# (its key is recorded), so that it can shadow distroless no more.
legacy="gcr.io/distroless/static-debian12:nonroot"
debian="$("$here/debian.sh" | tail -1)"
ca="$(host_ca_bundle)"
key="recipe=$STANDIN_RECIPE base=$(image_id "$debian") ca=$(sha256sum <"$ca" | cut -c1-16)"

lock
if [[ -f "$(key_file "$legacy")" ]]; then
	log "removing the stand-in an older version of this script committed as $legacy"
	buildah rmi "$legacy" >/dev/null 2>&1 || true
	rm -f "$(key_file "$legacy")"
fi
if standin_current "$name" "$key"; then
	log "reusing $name (stand-in)"
	echo "$name"
	exit 0
fi

log "building the stand-in $name: scratch + passwd/group (65532) + $ca + tzdata"
start=$(date +%s)
ctrs=()
trap 'for c in "${ctrs[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done' EXIT
src="$(buildah from --pull=never "$debian")"
ctrs+=("$src")
ctr="$(buildah from --pull=never scratch)"
ctrs+=("$ctr")
srcmnt="$(buildah mount "$src")"
mnt="$(buildah mount "$ctr")"

install -d -m 0755 "$mnt/etc/ssl/certs" "$mnt/usr/share" "$mnt/root" "$mnt/var"
install -d -m 0700 -o 65532 -g 65532 "$mnt/home/nonroot"
install -d -m 1777 "$mnt/tmp"
cat >"$mnt/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat >"$mnt/etc/group" <<'GROUP'
root:x:0:
nobody:x:65534:
tty:x:5:
staff:x:50:
nonroot:x:65532:
GROUP
chmod 0644 "$mnt/etc/passwd" "$mnt/etc/group"
install -m 0644 "$ca" "$mnt/etc/ssl/certs/ca-certificates.crt"
cp -a "$srcmnt/usr/share/zoneinfo" "$mnt/usr/share/zoneinfo"
cp -L "$srcmnt/etc/os-release" "$mnt/etc/os-release"

buildah umount "$ctr" "$src" >/dev/null
buildah config --user 65532 --workingdir /home/nonroot \
	--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	--env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt "$ctr"
buildah commit --quiet --rm "$ctr" "$name" >/dev/null
standin_record "$name" "$key"
log "built the stand-in $name in $(($(date +%s) - start))s"
echo "$name"
