#!/usr/bin/env bash
# Scans lease-exporter (./... of the main module) with govulncheck and fails only on
# vulnerabilities in code the exporter actually calls (govulncheck's symbol-level results);
# vulnerable code that is merely imported or required is printed as information.
#
# govulncheck is built from the Go module proxy (version pinned in hack/tools/vuln/go.mod)
# into ${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}/tools/bin. Its vulnerability
# database normally comes from https://vuln.go.dev, which our build machines cannot reach, and
# the module proxy refuses golang.org/x/vulndb, so the database must be brought in:
#
#   hack/govulncheck.sh                        scan against $GOVULNDB (default https://vuln.go.dev)
#   GOVULNDB=file:///path/to/db hack/govulncheck.sh
#                                              scan against a local copy of the database
#   GOVULNDB_OSV_DIR=/path/to/vulndb/data/osv hack/govulncheck.sh
#                                              build a local database from OSV files (for
#                                              example a golang.org/x/vulndb checkout copied
#                                              in) with hack/tools/vuln/mkvulndb, then scan
#   hack/govulncheck.sh --selftest             offline check of this script and govulncheck's
#                                              call-graph analysis with two synthetic entries
#
# Exit status: 0 no known vulnerability reaches the exporter's code; 1 at least one does
# (details printed); 2 the scan could not run (no database, build failure).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/hack/tools/vuln"
log() { echo "hack/govulncheck.sh: $*" >&2; }

cache_root="${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}"
bin="$cache_root/tools/bin"
mkdir -p "$bin"

# build NAME PACKAGE: builds PACKAGE from hack/tools/vuln into $bin/NAME unless a binary built
# from the same go.mod and Go version is already there. Serialised with hack/tools/build.sh's
# lock, since both write into $bin.
build() {
	local name="$1" pkg="$2" want
	want="$(cat "$tools/go.mod" "$tools/go.sum" "$tools"/mkvulndb/*.go | sha256sum | cut -c1-16) $(go env GOVERSION)"
	if [[ -x "$bin/$name" && "$(cat "$bin/.$name.stamp" 2>/dev/null)" == "$want" ]]; then
		return
	fi
	log "building $name into $bin"
	(cd "$tools" && GOWORK=off CGO_ENABLED=0 go build -mod=readonly -trimpath -o "$bin/.$name.tmp" "$pkg")
	mv -f "$bin/.$name.tmp" "$bin/$name"
	echo "$want" >"$bin/.$name.stamp"
}
exec 9>"$cache_root/tools/.lock"
flock 9
build govulncheck golang.org/x/vuln/cmd/govulncheck || { log "cannot build govulncheck"; exit 2; }
build mkvulndb ./mkvulndb || { log "cannot build mkvulndb"; exit 2; }
flock -u 9

# scan DB: runs govulncheck on the exporter against DB and maps its exit status
# (0 clean, 3 called vulnerabilities, anything else an error) to this script's.
scan() {
	local db="$1" status=0
	log "scanning ./... against $db"
	(cd "$root" && GOWORK=off "$bin/govulncheck" -db "$db" ./...) || status=$?
	case "$status" in
	0) return 0 ;;
	3) log "FAIL: the exporter calls vulnerable code (see above)"; return 1 ;;
	*)
		log "govulncheck could not complete (exit $status). Is the database reachable? Set GOVULNDB=file:///... or GOVULNDB_OSV_DIR=... (see the header of this script)."
		return 2
		;;
	esac
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if [[ "${1:-}" == "--selftest" ]]; then
	# A finding in web.Serve, which cmd/lease-exporter calls, must fail the scan; one in
	# web.ListenAndServe, which it never calls, must not.
	"$bin/mkvulndb" -osv "$tools/testdata/osv-uncalled" -out "$tmp/uncalled"
	status=0; scan "file://$tmp/uncalled" >"$tmp/uncalled.out" 2>&1 || status=$?
	if [[ $status -ne 0 ]]; then
		cat "$tmp/uncalled.out"; log "selftest FAILED: an uncalled vulnerable symbol failed the scan (exit $status)"; exit 2
	fi
	"$bin/mkvulndb" -osv "$tools/testdata" -out "$tmp/called"
	status=0; scan "file://$tmp/called" >"$tmp/called.out" 2>&1 || status=$?
	if [[ $status -ne 1 ]] || ! grep -q "GO-0000-0001" "$tmp/called.out"; then
		cat "$tmp/called.out"; log "selftest FAILED: a called vulnerable symbol did not fail the scan (exit $status)"; exit 2
	fi
	log "selftest passed: a called vulnerable symbol fails the scan, an uncalled one does not"
	exit 0
fi

db="${GOVULNDB:-https://vuln.go.dev}"
if [[ -n "${GOVULNDB_OSV_DIR:-}" ]]; then
	"$bin/mkvulndb" -osv "$GOVULNDB_OSV_DIR" -out "$tmp/db"
	db="file://$tmp/db"
fi
scan "$db"
