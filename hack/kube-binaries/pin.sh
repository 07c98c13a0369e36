#!/usr/bin/env bash
# Creates (or re-pins) the module k8s-<minor>/ that build.sh builds Kubernetes <minor> from:
# go.mod requires k8s.io/kubernetes at VERSION and repeats each of its staging `replace`s with
# the published v0.<minor>.<patch> (k8s.io/kubernetes points them at ./staging, which exists
# only in its own repository); tools.go names the commands to build.
#
# Usage: hack/kube-binaries/pin.sh VERSION [COMMAND...]
#   e.g. hack/kube-binaries/pin.sh v1.35.4 kube-apiserver kube-scheduler kube-controller-manager
# Without commands, an existing tools.go is kept (default for a new one: kube-apiserver only).
# The Go module proxy must serve VERSION: `go list -m -versions k8s.io/kubernetes`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${1:?usage: pin.sh VERSION [COMMAND...]}"
shift
[[ "$version" =~ ^v1\.([0-9]+)\.[0-9]+$ ]] || { echo "pin.sh: want a release like v1.35.4, got $version" >&2; exit 2; }
minor="1.${BASH_REMATCH[1]}"
staging="v0.${version#v1.}"
dir="$here/k8s-$minor"
mkdir -p "$dir"
cd "$dir"
export GOWORK=off

gomod="$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
[[ -f "$gomod" ]] || { echo "pin.sh: cannot download k8s.io/kubernetes@$version" >&2; exit 1; }

if (($#)) || [[ ! -f tools.go ]]; then
	cmds=("$@")
	((${#cmds[@]})) || cmds=(kube-apiserver)
	{
		echo '//go:build tools'
		echo
		echo "// Package tools names the Kubernetes $minor commands that ../build.sh builds (it reads"
		echo '// the imports below) and makes `go mod tidy` keep every module they need in go.sum.'
		echo 'package tools'
		echo
		echo 'import ('
		printf "\t_ \"k8s.io/kubernetes/cmd/%s\"\n" "${cmds[@]}" | sort
		echo ')'
	} >tools.go
fi

{
	echo "// Kubernetes $minor for the test matrix, written by ../pin.sh (see ../README.md). A module of"
	echo "// its own so the main module never depends on k8s.io/kubernetes, whose staging modules are"
	echo "// replaced here by their published $staging."
	echo "module github.com/lease-exporter/lease-exporter/hack/kube-binaries/k8s-$minor"
	echo
	echo "go $(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/').0"
	echo
	echo "require k8s.io/kubernetes $version"
	echo
	echo "replace ("
	# k8s.io/foo => ./staging/src/k8s.io/foo  becomes  k8s.io/foo => k8s.io/foo v0.N.P
	sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/[a-z0-9-]*$#\t\1 => \1 '"$staging"'#p' "$gomod"
	echo ")"
} >go.mod
go mod tidy
echo "pin.sh: pinned Kubernetes $version in $dir; build it with: hack/kube-binaries/build.sh $minor" >&2
