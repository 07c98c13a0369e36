#!/usr/bin/env bash
# Builds the Perses server (UI embedded) and percli v0.52.0 into a cache directory outside the
# repo, for the release tier's render (test/e2e's TestDashboardsDrawInPerses, through
# internal/testenv/perses), and prints their bin dir as the last line of stdout. Cold: about 5 min of npm and Go on 2 cores; warm: a no-op.
#
# Perses is Apache-2.0 and everything it needs is on the Go module proxy and npm, but a
# release's UI is not in its Go module: ui/embed.go is generated after the React app is built.
# So, as its Makefile does for a release: copy the module out of the read-only module cache,
# `npm ci` and `npm run build` in ui/, scripts/compress_assets.sh (gzips the app and writes
# embed.go), then `go build ./cmd/perses ./cmd/percli`.
#
# v0.52.0, not the newest: v0.54.0's server builds, but its UI needs @perses-dev/spec and
# @perses-dev/client, which the npm registry reachable here does not serve
# (docs/compatibility.md). The panel plugins are assembled separately (hack/perses/plugins.sh).
#
# Usage: PATH="$(hack/perses/build.sh | tail -1):$PATH"
# Environment:
#   LEASE_EXPORTER_CACHE  cache root (default: $HOME/.cache/lease-exporter)
#   FORCE_REBUILD=1       rebuild even when the binaries exist
set -euo pipefail

version=v0.52.0
export GOWORK=off CGO_ENABLED=0 GOFLAGS=-buildvcs=false

log() { echo "hack/perses/build.sh: $*" >&2; }

cache_root="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}"
bin="$cache_root/perses/perses-$version/bin"
mkdir -p "$cache_root/perses"
# Serialise concurrent callers so two builds never race on the same directory.
exec 9>"$cache_root/perses/.build.lock"
flock 9
if [[ "${FORCE_REBUILD:-}" != "1" && -x "$bin/perses" && -x "$bin/percli" ]]; then
	log "reusing $bin (perses, percli $version)"
	echo "$bin"
	exit 0
fi
for tool in npm node gzip; do
	command -v "$tool" >/dev/null || { log "$tool not found: Node.js 20 and npm come with the image, gzip with Debian"; exit 1; }
done

log "building perses $version into $bin (cold: ~5 min on 2 cores)"
start=$(date +%s)
tmp="$(mktemp -d "$cache_root/perses/build.XXXXXX")"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
src="$(cd "$tmp" && go mod download -json "github.com/perses/perses@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ ! -f "$src/go.mod" ]]; then
	log "go mod download github.com/perses/perses@$version gave no module directory"
	exit 1
fi
cp -r "$src" "$tmp/src"
chmod -R u+w "$tmp/src"
# The UI: npm's cache stays in the cache root, so a rebuild downloads nothing again.
(cd "$tmp/src/ui" && npm ci --no-audit --no-fund --loglevel=error --cache "$cache_root/perses/npm" >&2 && npm run build >&2)
(cd "$tmp/src" && bash scripts/compress_assets.sh >/dev/null)
# Stamped as its Makefile stamps a release, so the UI and /api/version report it.
ldflags="-s -w -X github.com/prometheus/common/version.Version=${version#v} -X github.com/prometheus/common/version.Branch=release"
(cd "$tmp/src" && go build -trimpath -ldflags "$ldflags" -o "$tmp/bin/" ./cmd/perses ./cmd/percli)
rm -rf "$bin"
mkdir -p "$(dirname "$bin")"
mv "$tmp/bin" "$bin"
log "built perses and percli $version in $(($(date +%s) - start))s"
echo "$bin"
