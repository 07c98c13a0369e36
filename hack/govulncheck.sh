#!/usr/bin/env bash
# Scans lease-exporter (./... of the main module) with govulncheck and fails only on
# vulnerabilities in code the exporter actually calls (govulncheck's symbol-level results);
# vulnerable code that is merely imported or required is printed as information.
#
# govulncheck is built from the Go module proxy (version pinned in hack/tools/vuln/go.mod)
# into ${LEASE_EXPORTER_CACHE:-$HOME/.cache/lease-exporter}/tools/bin. Which database:
#
#   GOVULNDB=URL hack/govulncheck.sh           exactly that database (https://... or file:///...)
#   hack/govulncheck.sh                        the live https://vuln.go.dev when it answers;
#                                              otherwise the OSV snapshot in $GOVULNDB_OSV_DIR
#                                              (as below); with neither, exit 2
#   GOVULNDB_OSV_DIR=../shared/vulndb/osv hack/govulncheck.sh
#                                              a directory of OSV files (data/osv of a
#                                              golang.org/x/vulndb checkout, or the snapshot in
#                                              shared/), made into a database by
#                                              hack/tools/vuln/mkvulndb, used when the live one
#                                              does not answer
#   hack/govulncheck.sh --selftest             offline check of this script and govulncheck's
#                                              call-graph analysis with two synthetic entries
#
# Our build machines cannot reach vuln.go.dev and the module proxy refuses golang.org/x/vulndb,
# so there the snapshot is what is scanned against. Its source files leave every "modified"
# date unset; mkvulndb stamps them with $GOVULNDB_OSV_DATE, else the snapshot date a README.md
# next to the directory gives as "(YYYY-MM-DD)", else each file's modification time.
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

# osv_date DIR: the snapshot date for entries without one (see the header), or nothing.
osv_date() {
	local readme
	[[ -n "${GOVULNDB_OSV_DATE:-}" ]] && { echo "$GOVULNDB_OSV_DATE"; return; }
	for readme in "$1/README.md" "$1/../README.md"; do
		if [[ -f "$readme" ]]; then
			grep -o '([0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\})' "$readme" | head -1 | tr -d '()'
			return
		fi
	done
}

live=https://vuln.go.dev
if [[ -n "${GOVULNDB:-}" ]]; then
	db="$GOVULNDB"
elif curl -fsS --max-time 10 -o /dev/null "$live/index/db.json" 2>/dev/null; then
	db="$live"
elif [[ -n "${GOVULNDB_OSV_DIR:-}" ]]; then
	date="$(osv_date "$GOVULNDB_OSV_DIR")"
	log "$live does not answer; building a database from $GOVULNDB_OSV_DIR${date:+ (entries without a modified date: $date)}"
	"$bin/mkvulndb" -osv "$GOVULNDB_OSV_DIR" -out "$tmp/db" ${date:+-modified "$date"} || exit 2
	db="file://$tmp/db"
else
	log "$live does not answer and GOVULNDB_OSV_DIR is not set: no vulnerability database (see the header of this script)"
	exit 2
fi
scan "$db"
