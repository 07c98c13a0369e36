#!/usr/bin/env bash
# Assembles the Perses panel, query and variable plugins the lease-exporter dashboards use into
# a plugin directory, cached outside the repo, and prints its path as the last line of stdout.
# `percli lint --plugin.path DIR` validates the dashboards against it (make test, mixin/render),
# and the Perses server of the release tier's render (test/e2e, internal/testenv/perses)
# loads a copy of it. Cold: ~30 s (npm and the module
# proxy); warm: a no-op.
#
# A Perses plugin, as `percli plugin build` would archive it, is:
#   - the browser bundle: npm's @perses-dev/<name>-plugin tarball (package.json, whose "perses"
#     field names the plugin kinds, mf-manifest.json and __mf/);
#   - schemas/: the CUE schemas, which the npm tarball does not carry. They are in the Go module
#     github.com/perses/plugins/<name> (also the Perses Go SDK), pinned with its hash in
#     hack/perses/go.mod and go.sum;
#   - cue.mod/module.cue without its deps, and Perses' own cue/ (the module the schemas import)
#     vendored under cue.mod/pkg/github.com/perses/perses/cue.
# The server refuses a plugin without schemas, and schema validation cannot be turned off.
#
# Versions: the bundles built against Perses 0.52's shared modules. npm serves a patch release
# newer than the Go module for two of them (TimeSeriesChart 0.10.2 beside schemas 0.10.1,
# Markdown 0.9.1 beside 0.9.0); their schemas are unchanged. Table, StatusHistoryChart and
# BarChart are not here: the module proxy serves none of their Go modules, so they have no
# schemas, and the dashboards do without them (docs/dashboards.md, "Perses"). Markdown is
# not in the dashboards: it is what `percli migrate` puts in place of a Grafana panel it
# cannot convert, and test/e2e renders migrated dashboards too.
#
# Environment:
#   LEASE_EXPORTER_CACHE  cache root (default: $HOME/.cache/lease-exporter)
#   FORCE_REBUILD=1       assemble again even when the directory exists
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# name  npm package@version  Go module (its version is hack/perses/go.mod's)
plugins=(
	"Prometheus @perses-dev/prometheus-plugin@0.53.4 github.com/perses/plugins/prometheus"
	"TimeSeriesChart @perses-dev/timeseries-chart-plugin@0.10.2 github.com/perses/plugins/timeserieschart"
	"StatChart @perses-dev/stat-chart-plugin@0.10.0 github.com/perses/plugins/statchart"
	"Markdown @perses-dev/markdown-plugin@0.9.1 github.com/perses/plugins/markdown"
)
export GOWORK=off GONOSUMDB=github.com/perses/plugins GOFLAGS=-mod=readonly

log() { echo "hack/perses/plugins.sh: $*" >&2; }

cache_root="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}"
# The hash of this script (the list and how it assembles) and of go.sum is in the path:
# changing either assembles a new directory, and the old ones are removed.
key="$(cat "$0" "$here/go.sum" | sha256sum | cut -c1-12)"
out="$cache_root/perses/plugins-$key"
mkdir -p "$cache_root/perses"
exec 9>"$cache_root/perses/.plugins.lock"
flock 9
if [[ "${FORCE_REBUILD:-}" != "1" && -f "$out/.complete" ]]; then
	log "reusing $out"
	echo "$out"
	exit 0
fi
command -v npm >/dev/null || { log "npm not found: Node.js 20 and npm come with the image"; exit 1; }

for old in "$cache_root"/perses/plugins-*; do
	[[ -d "$old" && "$old" != "$out" ]] && { chmod -R u+w "$old"; rm -rf "$old"; }
done
log "assembling ${#plugins[@]} plugins into $out"
tmp="$(mktemp -d "$cache_root/perses/plugins.XXXXXX")"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# Go verifies each module against hack/perses/go.sum.
moddir() { (cd "$here" && go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'); }
perses_cue="$(moddir github.com/perses/perses)/cue"
[[ -d "$perses_cue/common" ]] || { log "github.com/perses/perses has no cue/common at $perses_cue"; exit 1; }
for p in "${plugins[@]}"; do
	read -r name pkg mod <<<"$p"
	dst="$tmp/out/$name"
	mkdir -p "$dst" "$tmp/npm-$name"
	tgz="$(cd "$tmp/npm-$name" && npm pack "$pkg" --silent --cache "$cache_root/perses/npm" | tail -1)"
	[[ -f "$tmp/npm-$name/$tgz" ]] || { log "npm pack $pkg gave no tarball"; exit 1; }
	tar -xzf "$tmp/npm-$name/$tgz" -C "$dst" --strip-components=1 package/package.json package/mf-manifest.json package/__mf package/LICENSE
	src="$(moddir "$mod")"
	[[ -d "$src/schemas" ]] || { log "$mod has no schemas/ at $src"; exit 1; }
	cp -r "$src/schemas" "$dst/schemas"
	mkdir -p "$dst/cue.mod/pkg/github.com/perses/perses"
	# module.cue's deps would send CUE to a registry; the vendored copy below replaces them.
	sed -n '/^deps:/q;p' "$src/cue.mod/module.cue" >"$dst/cue.mod/module.cue"
	cp -r "$perses_cue" "$dst/cue.mod/pkg/github.com/perses/perses/cue"
	# Copies out of the module cache are read-only, also to their owner.
	chmod -R u+w "$dst"
	rm -rf "$dst/cue.mod/pkg/github.com/perses/perses/cue/cue.mod"
	# Tests in schemas/ are the plugin's own fixtures, not schemas.
	find "$dst/schemas" -type d -name tests -prune -exec rm -rf {} +
done
touch "$tmp/out/.complete"
rm -rf "$out"
mv "$tmp/out" "$out"
log "assembled $out"
echo "$out"
