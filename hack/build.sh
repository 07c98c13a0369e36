#!/usr/bin/env bash
# THE way to build the lease-exporter release binary: the Dockerfile, CI and
# people all call this script, so every binary is built with the same flags:
# static (CGO_ENABLED=0), -trimpath, stripped (-s -w), and stamped with version
# information that `lease-exporter --version`, the landing page and the
# lease_exporter_build_info metric report.
#
# Usage: hack/build.sh [OUTPUT [COMMAND]]
#   OUTPUT   default: bin/lease-exporter
#   COMMAND  the command under cmd/ to build, default: lease-exporter; kubectl-lease is the
#            kubectl plugin (docs/kubectl-plugin.md), built and stamped the same way
#
# Version information comes from the environment first, then from git, then
# falls back to "unknown", so the script also works without .git (a docker
# build context, a source tarball):
#   VERSION      default: `git describe --tags --match 'v[0-9]*' --dirty` without
#                the leading v; without a tag 0.0.0-g<short-sha>[-dirty]
#   REVISION     default: `git rev-parse HEAD`
#   BRANCH       default: `git rev-parse --abbrev-ref HEAD`
#   BUILD_USER   default: $(id -un)@$(hostname)
#   BUILD_DATE   default: SOURCE_DATE_EPOCH if set, else now; UTC, 20060102-15:04:05
# GOOS, GOARCH and GOFLAGS are passed through to go build (cross-compiling
# needs nothing else: the binary is pure Go).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

out="${1:-bin/lease-exporter}"
command="${2:-lease-exporter}"
[[ -d "cmd/$command" ]] || { echo "hack/build.sh: no command cmd/$command: build lease-exporter or kubectl-lease" >&2; exit 2; }
pkg="./cmd/$command"
vpkg="github.com/prometheus/common/version"

# git_out CMD...: git's output, or nothing when there is no git or no repo.
git_out() {
	command -v git >/dev/null 2>&1 || return 0
	git -C "$root" rev-parse --git-dir >/dev/null 2>&1 || return 0
	git -C "$root" "$@" 2>/dev/null || true
}

version="${VERSION:-}"
if [[ -z "$version" ]]; then
	version="$(git_out describe --tags --match 'v[0-9]*' --dirty)"
	version="${version#v}"
fi
if [[ -z "$version" ]]; then
	short="$(git_out describe --always --dirty --abbrev=12)"
	version="${short:+0.0.0-g$short}"
fi
version="${version:-unknown}"

revision="${REVISION:-$(git_out rev-parse HEAD)}"
revision="${revision:-unknown}"

branch="${BRANCH:-$(git_out rev-parse --abbrev-ref HEAD)}"
branch="${branch:-unknown}"

build_user="${BUILD_USER:-$(id -un 2>/dev/null || echo unknown)@$(hostname 2>/dev/null || cat /etc/hostname 2>/dev/null || echo unknown)}"

build_date="${BUILD_DATE:-}"
if [[ -z "$build_date" ]]; then
	if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then
		build_date="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d-%H:%M:%S)"
	else
		build_date="$(date -u +%Y%m%d-%H:%M:%S)"
	fi
fi

# -X values must not contain spaces or quotes: ldflags are split on spaces.
for v in "$version" "$revision" "$branch" "$build_user" "$build_date"; do
	if [[ "$v" =~ [[:space:]\'\"] ]]; then
		echo "hack/build.sh: version field '$v' contains whitespace or quotes" >&2
		exit 2
	fi
done

ldflags="-s -w"
ldflags+=" -X $vpkg.Version=$version"
ldflags+=" -X $vpkg.Revision=$revision"
ldflags+=" -X $vpkg.Branch=$branch"
ldflags+=" -X $vpkg.BuildUser=$build_user"
ldflags+=" -X $vpkg.BuildDate=$build_date"

echo "hack/build.sh: building $out: version=$version revision=$revision branch=$branch" >&2
# -buildvcs=false: the revision is stamped above; go's own VCS stamping would
# fail where .git exists but git does not (or belongs to another user).
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out" "$pkg"
