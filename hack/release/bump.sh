#!/usr/bin/env bash
# Points the chart, the Kustomize base and the changelog at a new version, the commit before
# `make release VERSION=X.Y.Z` and its tag (docs/versioning.md, "How a release is cut").
#
# Usage: hack/release/bump.sh X.Y.Z
# Sets Chart.yaml's version and appVersion, the Kustomize base's newTag (vX.Y.Z), and, when
# CHANGELOG.md has no "## [X.Y.Z]" entry yet, turns its [Unreleased] section into one dated
# today (Keep a Changelog) under a fresh, empty [Unreleased]. Review the diff, then commit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source hack/release/lib.sh
v="${1:-}"
check_version "$v"
sed -i -E "s/^version: .*/version: $v/; s/^appVersion: .*/appVersion: \"$v\"/" "$CHART"
sed -i -E "s/^( *newTag: ).*/\1v$v/" "$KUSTOMIZE_IMAGES"
if ! grep -q "^## \[$v\]" CHANGELOG.md; then
	sed -i "0,/^## \[Unreleased\]$/s//## [Unreleased]\n\n## [$v] - $(date -u +%Y-%m-%d)/" CHANGELOG.md
fi
check_pins "$v"
echo "hack/release/bump.sh: the chart, the Kustomize base and CHANGELOG.md now say $v; review (git diff) and commit" >&2
