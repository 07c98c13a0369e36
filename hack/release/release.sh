#!/usr/bin/env bash
# Builds a release into dist/ from a clean tree: `make release VERSION=X.Y.Z`.
# docs/versioning.md ("How a release is cut") says what each file is and how to check it.
#
#   lease-exporter_<os>_<arch>.tar.gz   the exporter, with LICENSE and README.md
#   kubectl-lease_<os>_<arch>.tar.gz    the kubectl plugin, the same way (the archives krew installs)
#       for linux/amd64, linux/arm64, darwin/amd64 and darwin/arm64
#   <archive name>.cdx.json             a CycloneDX SBOM of each binary: every Go module and its version
#   lease-exporter_image.oci.tar        the image for linux/amd64 and linux/arm64: one OCI image
#                                       index, as an OCI image layout (tar); its tag is vX.Y.Z
#   lease-exporter_image.digest         the index's digest (what to sign, pull and pin)
#   lease-exporter_image_linux_<arch>.cdx.json   an SBOM of each platform's image
#   lease-exporter-X.Y.Z.tgz            the Helm chart (helm lint --strict clean)
#   lease-exporter_kustomize.tar.gz     deploy/kustomize with the image pinned to vX.Y.Z
#   krew/lease.yaml                     the krew manifest, hashing the kubectl-lease archives
#   SHA256SUMS                          over every file above
#   SHA256SUMS.sig                      only with COSIGN_KEY: cosign's signature of SHA256SUMS
#
# Reproducible: every time, owner and order comes from the commit (SOURCE_DATE_EPOCH is its
# committer time), so two runs on one commit give byte-identical files and the same image digest.
#
# Environment:
#   VERSION       X.Y.Z (semantic version, no v): required
#   COSIGN_KEY    a cosign private key (file or KMS URI) to sign SHA256SUMS with; COSIGN_PASSWORD
#                 its password. Unset, SHA256SUMS is left for the workflow to sign keyless.
#   RELEASE_DIST  where to put the release (default dist)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source hack/release/lib.sh

dist="${RELEASE_DIST:-dist}"
check_version "${VERSION:-}"
check_clean_tree
check_pins "$VERSION"

export SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)"
export REVISION BRANCH BUILD_USER BUILD_DATE VERSION
REVISION="$(git rev-parse HEAD)"
# Fixed, not the builder's: the same commit gives the same bytes wherever it is built.
BRANCH="v$VERSION"
BUILD_USER="release"
BUILD_DATE="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d-%H:%M:%S)"

tools="$(hack/tools/build.sh release | tail -1)"
helm="$(hack/tools/build.sh | tail -1)/helm"

# Everything is built beside dist/ and moved in whole at the end, so a failed run leaves no
# half-written dist/ (and the previous one untouched).
mkdir -p "$(dirname "$dist")"
stage="$(mktemp -d "$(dirname "$dist")/.release-XXXXXX")"
trap 'rm -rf "$stage"' EXIT
bins="$stage/.bin"
mkdir -p "$bins"
log "building v$VERSION ($REVISION, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH) into $dist"
start=$(date +%s)

# 1. Archives and each binary's SBOM. kubectl-lease's are krew's, with the manifest krew checks.
hack/krew/package.sh "$stage" "$stage/krew/lease.yaml" >&2
for platform in $PLATFORMS; do
	os="${platform%/*}" arch="${platform#*/}"
	GOOS="$os" GOARCH="$arch" hack/build.sh "$bins/lease-exporter_${os}_${arch}/lease-exporter" lease-exporter
	archive "$bins/lease-exporter_${os}_${arch}" lease-exporter "$stage/lease-exporter_${os}_${arch}.tar.gz"
	sbom "$tools" "$bins/lease-exporter_${os}_${arch}/lease-exporter" "$stage/lease-exporter_${os}_${arch}.cdx.json"
	mkdir -p "$bins/kubectl-lease_${os}_${arch}"
	tar -xzf "$stage/kubectl-lease_${os}_${arch}.tar.gz" -C "$bins/kubectl-lease_${os}_${arch}" kubectl-lease
	sbom "$tools" "$bins/kubectl-lease_${os}_${arch}/kubectl-lease" "$stage/kubectl-lease_${os}_${arch}.cdx.json"
done

# 2. The multi-arch image, as an OCI layout in a reproducible tar, and each platform's SBOM
#    from the binary inside it (the image's only software: the base holds data files only).
hack/image/multiarch.sh "$bins/oci" | tail -1 >"$stage/lease-exporter_image.digest"
tar_dir "$bins/oci" "$stage/lease-exporter_image.oci.tar"
for arch in amd64 arm64; do
	image_binary "$bins/oci" "$arch" "$bins/image_$arch"
	sbom "$tools" "$bins/image_$arch/lease-exporter" "$stage/lease-exporter_image_linux_$arch.cdx.json"
done

# 3. The chart, linted strictly, packaged reproducibly.
"$helm" lint --strict deploy/helm/lease-exporter >&2
"$helm" package deploy/helm/lease-exporter -d "$bins/chart" >&2
retar_gz "$bins/chart/lease-exporter-$VERSION.tgz" "$stage/lease-exporter-$VERSION.tgz"

# 4. The Kustomize tree (check_pins made sure the base pins vX.Y.Z).
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
	-C deploy -cf - kustomize | gzip -n >"$stage/lease-exporter_kustomize.tar.gz"

# 5. Checksums over everything, then the signature of the checksums.
rm -rf "$bins"
(cd "$stage" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
if [[ -n "${COSIGN_KEY:-}" ]]; then
	# Offline: no transparency log entry (the keyless workflow signature gets one).
	"$tools/cosign" sign-blob --yes --key "$COSIGN_KEY" --tlog-upload=false \
		--output-signature "$stage/SHA256SUMS.sig" "$stage/SHA256SUMS" >&2
fi

rm -rf "$dist"
mv "$stage" "$dist"
chmod 0755 "$dist"
trap - EXIT
log "v$VERSION in $dist in $(($(date +%s) - start))s: image index $(cat "$dist/lease-exporter_image.digest")"
(cd "$dist" && find . -type f -printf '%s\t%P\n' | LC_ALL=C sort -k2) >&2
