# Sourced by the hack/image scripts: logging, the cache's lock and the stand-in images' cache
# check. The stand-ins live in buildah's own storage (they are images; the storage already
# dedups their layers); the cache dir records the key each was built from, so a changed
# recipe, Go toolchain or Debian suite builds a new one instead of reusing a stale one.

# The recipe's version: bump it when a stand-in's contents change without its key changing.
STANDIN_RECIPE=1
DEBIAN_SUITE=bookworm

cache_root="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}"
image_cache="$cache_root/image"

log() { echo "hack/image/$(basename "$0"): $*" >&2; }

# need CMD...: fails with the package to install when a command is missing.
need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || {
			log "$c not found: run hack/deps.sh release (it installs buildah, runc and debootstrap)"
			exit 2
		}
	done
}

# lock: one builder of stand-ins and images at a time, across CI clones and helpers sharing
# the machine (buildah's storage is shared too). Held on fd 8 until the script exits.
lock() {
	mkdir -p "$image_cache"
	exec 8>"$image_cache/.lock"
	flock 8
}

# standin_current REF KEY: true when REF is in buildah's storage and is the image built from
# KEY. Keys are kept in the cache dir, not in labels, since labels are inherited: the
# exporter's image would carry its base's.
standin_current() {
	local id
	id="$(image_id "$1" 2>/dev/null)" || return 1
	[[ "$(cat "$(key_file "$1")" 2>/dev/null)" == "$id $2" ]]
}

# standin_record REF KEY: records that the image now named REF was built from KEY.
standin_record() {
	echo "$(image_id "$1") $2" >"$(key_file "$1")"
}

# key_file REF: where REF's key is recorded.
key_file() {
	mkdir -p "$image_cache/keys"
	echo "$image_cache/keys/$(echo "$1" | tr '/:' '__')"
}

# host_go_env: the Go settings the host's toolchain uses to reach the module proxy, as
# NAME=VALUE lines, so builds inside the stand-in fetch modules the way the host does.
host_go_env() {
	local v
	for v in GOPROXY GOSUMDB GONOSUMDB GONOPROXY GOPRIVATE GOINSECURE; do
		echo "$v=$(go env "$v")"
	done
}

# host_ca_bundle: the CA bundle the host trusts (SSL_CERT_FILE if set, as Go reads it).
host_ca_bundle() {
	local f="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
	[[ -s "$f" ]] || { log "no CA bundle at $f"; exit 2; }
	echo "$f"
}

# image_id REF: the image's ID (also how a stand-in built on another names its base in its key).
image_id() {
	buildah inspect --type image --format '{{.FromImageID}}' "$1"
}
