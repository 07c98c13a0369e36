#!/usr/bin/env bash
# Builds the lease-exporter image from the repository's unmodified Dockerfile with buildah, on
# local stand-ins for its base images (golang.sh, distroless.sh: nothing is pulled, and each is
# passed by its own local name through the Dockerfile's GO_IMAGE and BASE_IMAGE), and
# writes it as a docker-archive that `ctr -n k8s.io images import` and `docker load` accept.
#
# Usage: hack/image/build.sh
# Prints, last on stdout, two lines: the image reference, then the archive's path:
#   ghcr.io/lease-exporter/lease-exporter:v<VERSION>
#   ${LEASE_EXPORTER_CACHE:-~/.cache/lease-exporter}/image/lease-exporter-v<VERSION>.tar
# The reference is the chart's and the Kustomize base's image name, so after an import
# `helm install --set image.tag=v<VERSION> --set image.pullPolicy=Never` runs it.
#
# Environment: the Dockerfile's build arguments, defaulting as its header says (from git):
#   VERSION  git describe --tags --always --dirty, without the leading v
#   REVISION, BRANCH, BUILD_DATE (Prometheus' 20060102-15:04:05), CREATED (RFC 3339)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$here/lib.sh"
need buildah

git_out() { git -C "$root" "$@" 2>/dev/null || true; }
version="${VERSION:-$(git_out describe --tags --always --dirty | sed 's/^v//')}"
revision="${REVISION:-$(git_out rev-parse HEAD)}"
branch="${BRANCH:-$(git_out rev-parse --abbrev-ref HEAD)}"
now="$(date -u +%s)"
build_date="${BUILD_DATE:-$(date -u -d "@$now" +%Y%m%d-%H:%M:%S)}"
created="${CREATED:-$(date -u -d "@$now" +%Y-%m-%dT%H:%M:%SZ)}"
if [[ -z "$version" ]]; then
	log "no VERSION given and none from git (git describe in $root)"
	exit 2
fi
# A tag is [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}: say so here rather than in buildah's words.
if [[ ! "v$version" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]]; then
	log "VERSION '$version' does not make an image tag (v$version)"
	exit 2
fi
ref="ghcr.io/lease-exporter/lease-exporter:v$version"
archive="$image_cache/lease-exporter-v$version.tar"

go_image="$("$here/golang.sh" | tail -1)"
base_image="$("$here/distroless.sh" | tail -1)"

lock
old="$(image_id "$ref" 2>/dev/null || true)"
log "building $ref from $root/Dockerfile (GO_IMAGE=$go_image BASE_IMAGE=$base_image)"
start=$(date +%s)
# --pull=never: the bases are the local stand-ins. --network host: the builder stage's
# `go mod download` reaches the module proxy as the host does. The Dockerfile's cache mounts
# keep the module and build caches in buildah's storage between builds.
buildah bud --pull=never --network host --layers=false \
	--build-arg GO_IMAGE="$go_image" --build-arg BASE_IMAGE="$base_image" \
	--build-arg VERSION="$version" --build-arg REVISION="$revision" --build-arg BRANCH="$branch" \
	--build-arg BUILD_DATE="$build_date" --build-arg CREATED="$created" \
	--tag "$ref" --file "$root/Dockerfile" "$root" >&2
log "built $ref in $(($(date +%s) - start))s"
# A rebuild under the same tag leaves the previous image untagged: remove it, not others'.
new="$(image_id "$ref")"
if [[ -n "$old" && "$old" != "$new" ]]; then
	buildah rmi "$old" >/dev/null 2>&1 || true
fi

# Written beside and renamed, so a reader never sees half an archive.
tmp="$(mktemp "$archive.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
rm -f "$tmp"
buildah push --quiet "$ref" "docker-archive:$tmp:$ref" >&2
mv "$tmp" "$archive"
trap - EXIT
log "wrote $archive ($(du -m "$archive" | cut -f1) MB)"
# Each version writes its own archive (~50 MB); those of other versions a day old go.
find "$image_cache" -maxdepth 1 -name 'lease-exporter-v*.tar' -mtime +0 ! -path "$archive" -delete
echo "$ref"
echo "$archive"
