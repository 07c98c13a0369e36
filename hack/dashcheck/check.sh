#!/usr/bin/env bash
# Checks the Grafana dashboards in dashboards/ (or the directory given as $1):
#  1. schema + conventions: hack/dashcheck/check.mjs (tsc against @grafana/schema)
#  2. PromQL: every query parses and uses only metrics in docs/metrics.md
#     (Go module hack/dashcheck/promql; skip with DASHCHECK_SKIP_GO=1).
# Exits non-zero on any failure; every message names the file and panel.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dir="$(cd "${1:-$root/dashboards}" && pwd)"

command -v node >/dev/null || { echo "dashcheck: node (>= 20) is required" >&2; exit 2; }

# npm ci installs exactly package-lock.json; redo it when the lock changed
# since the last install (npm records what it installed in .package-lock.json).
if [[ ! -f "$here/node_modules/.package-lock.json" || "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]]; then
  echo "dashcheck: installing npm dependencies (npm ci)"
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

status=0
node "$here/check.mjs" "$dir" || status=1

if [[ "${DASHCHECK_SKIP_GO:-}" != 1 ]]; then
  command -v go >/dev/null || { echo "dashcheck: go is required for the PromQL check (or set DASHCHECK_SKIP_GO=1)" >&2; exit 2; }
  # The test reads the dashboards and docs/metrics.md relative to the repo
  # unless told otherwise.
  (cd "$here/promql" && DASHCHECK_DASHBOARDS="$dir" go test -count=1 ./...) || status=1
fi

if [[ $status -ne 0 ]]; then
  echo "dashcheck: FAILED" >&2
fi
exit $status
