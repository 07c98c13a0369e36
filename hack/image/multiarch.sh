#!/usr/bin/env bash
# Builds the release image for linux/amd64 and linux/arm64 as one multi-arch OCI image index,
# from the repository's unmodified Dockerfile with buildah (Go cross-compiles in the builder
# stage; nothing is emulated), reproducibly, and writes it as an OCI image layout directory.
# `make release` calls it (hack/release/release.sh); hack/image/build.sh stays the tests'
# single-arch build.
#
# Usage: hack/image/multiarch.sh OUT
#   OUT  the OCI image layout directory to write (must not exist); its index.json names the
#        index with the tag v$VERSION (org.opencontainers.image.ref.name)
# Environment (all required; hack/release/release.sh sets them from the commit):
#   VERSION, REVISION, BRANCH, SOURCE_DATE_EPOCH
# Prints the image index's digest (sha256:...) last on stdout.
#
# Reproducible: --timestamp SOURCE_DATE_EPOCH fixes every created time, history entry and file
# time buildah writes; --identity-label=false leaves out buildah's own version; the binary is
# reproducible (hack/build.sh: -trimpath, no VCS stamping, fixed build user and date). So the
# same commit on the same stand-ins gives the same index digest (test/release checks it).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$here/lib.sh"
need buildah

out="${1:?usage: hack/image/multiarch.sh OUT (an OCI layout directory to create)}"
for v in VERSION REVISION BRANCH SOURCE_DATE_EPOCH; do
	[[ -n "${!v:-}" ]] || { log "$v is not set: run it through make release VERSION=X.Y.Z"; exit 2; }
done
[[ ! -e "$out" ]] || { log "$out exists: give a path to create"; exit 2; }
platforms=(linux/amd64 linux/arm64)

go_image="$("$here/golang.sh" | tail -1)"
base_image="$("$here/distroless.sh" | tail -1)"

lock

# per_platform REF: a local manifest list REF-multiarch with REF under every platform's label.
# The stand-ins are the host's (amd64) and need no other: the distroless stand-in holds only
# data (passwd, CA bundle, tzdata), and the builder stage must run on the build host anyway
# (the Dockerfile's FROM --platform=$BUILDPLATFORM). But buildah 1.28, unable to pull, ignores
# that --platform and looks for the builder under the target's platform too; offering the host's
# toolchain under the arm64 label is what --platform=$BUILDPLATFORM asks for. TARGETARCH still
# comes from --platform, so hack/build.sh cross-compiles for arm64.
per_platform() {
	local ref="$1" list="$1-multiarch" key id p c created
	id="$(image_id "$ref")"
	key="recipe=$STANDIN_RECIPE of=$id platforms=${platforms[*]}"
	# A manifest list has no image ID of its own: its key file holds the source's key alone.
	if [[ "$(cat "$(key_file "$list")" 2>/dev/null)" == "$key" ]] && buildah manifest inspect "$list" >/dev/null 2>&1; then
		echo "$list"
		return
	fi
	# Committed with the source's own creation time, so a rebuilt list from the same source
	# gives the same images (and the release image built on it the same digest).
	created="$(buildah inspect --type image --format '{{.OCIv1.Created.Unix}}' "$ref")"
	buildah manifest rm "$list" >/dev/null 2>&1 || true
	buildah manifest create "$list" >/dev/null
	for p in "${platforms[@]}"; do
		c="$(buildah from --pull=never "$ref")"
		buildah config --os "${p%/*}" --arch "${p#*/}" "$c"
		buildah commit --quiet --rm --timestamp "$created" "$c" "$ref-${p#*/}" >/dev/null
		buildah manifest add "$list" "containers-storage:$ref-${p#*/}" >/dev/null
	done
	echo "$key" >"$(key_file "$list")"
	echo "$list"
}
go_list="$(per_platform "$go_image")"
base_list="$(per_platform "$base_image")"

list="localhost/lease-exporter/release:v$VERSION"
buildah manifest rm "$list" >/dev/null 2>&1 || true
created="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
log "building $list for ${platforms[*]} from $root/Dockerfile (timestamp $created)"
start=$(date +%s)
# One platform at a time, in a fixed order: given several at once, buildah builds them side by
# side and adds each to the list as it finishes, so the index's order (and digest) would vary.
for p in "${platforms[@]}"; do
	buildah bud --pull=never --network host --layers=false \
		--platform "$p" --manifest "$list" \
		--timestamp "$SOURCE_DATE_EPOCH" --identity-label=false \
		--build-arg GO_IMAGE="$go_list" --build-arg BASE_IMAGE="$base_list" \
		--build-arg VERSION="$VERSION" --build-arg REVISION="$REVISION" --build-arg BRANCH="$BRANCH" \
		--build-arg BUILD_DATE="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d-%H:%M:%S)" \
		--build-arg CREATED="$created" \
		--file "$root/Dockerfile" "$root" >&2
done
log "built $list in $(($(date +%s) - start))s"

# --all: every platform's image with the index; --format oci: OCI media types throughout.
buildah manifest push --quiet --all --format oci "$list" "oci:$out:v$VERSION" >&2
# The platforms' images are untagged in buildah's storage: remove them with the list (the
# next release builds anew; the tests' single-arch images are tagged and stay).
instances="$(buildah manifest inspect "$list" | python3 -c 'import json,sys; print("\n".join(m["digest"] for m in json.load(sys.stdin)["manifests"]))')"
buildah manifest rm "$list" >/dev/null
for d in $instances; do
	buildah rmi "$(buildah images --no-trunc --format '{{.ID}} {{.Digest}}' | awk -v d="$d" '$2 == d {print $1}')" >/dev/null 2>&1 || true
done
digest="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$out/index.json")"
log "wrote $out: index $digest"
echo "$digest"
