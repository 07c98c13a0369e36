# Sourced by hack/release/release.sh and bump.sh (and hack/krew/package.sh for `archive`): the
# checks a release makes before it builds anything, and the reproducible ways it writes files.

PLATFORMS="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"

log() { echo "make release: $*" >&2; }
# die MESSAGE: the one line that says what is wrong and how to fix it; exit 2.
die() {
	log "$*"
	exit 2
}

# check_version V: V is a semantic version without its v (semver.org 2.0.0; no build metadata,
# which an image tag cannot carry).
check_version() {
	local v="$1" n='(0|[1-9][0-9]*)' id='(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)'
	[[ -n "$v" ]] || die "VERSION is not set: make release VERSION=X.Y.Z (a semantic version, such as 0.2.0)"
	[[ "$v" != v* ]] || die "VERSION '$v' starts with v: give it without, VERSION=${v#v} (the tag is v${v#v})"
	[[ "$v" != *+* ]] || die "VERSION '$v' has build metadata (+...), which an image tag cannot carry: drop it"
	[[ "$v" =~ ^$n\.$n\.$n(-$id(\.$id)*)?$ ]] ||
		die "VERSION '$v' is not a semantic version X.Y.Z[-prerelease] (such as 0.2.0 or 0.2.0-rc.1): https://semver.org"
}

# check_clean_tree: a release is built from a commit, so nothing may be changed or untracked.
check_clean_tree() {
	local dirty
	dirty="$(git status --porcelain --untracked-files=normal)"
	[[ -z "$dirty" ]] ||
		die "the tree is not clean ($(wc -l <<<"$dirty") changed or untracked, first: $(head -1 <<<"$dirty" | cut -c4-)): commit or stash them, a release is built from a commit"
}

# check_pins V: the chart, the Kustomize base and the changelog at this commit all say V, so
# what `helm install --version V` and `kubectl apply -k ...?ref=vV` deploy is this release.
check_pins() {
	local v="$1" bad=()
	[[ "$(chart_field version)" == "$v" ]] || bad+=("Chart.yaml version $(chart_field version)")
	[[ "$(chart_field appVersion)" == "$v" ]] || bad+=("Chart.yaml appVersion $(chart_field appVersion)")
	[[ "$(kustomize_tag)" == "v$v" ]] || bad+=("the Kustomize base's newTag $(kustomize_tag)")
	grep -q "^## \[$v\]" CHANGELOG.md || bad+=("CHANGELOG.md has no '## [$v]' entry")
	((${#bad[@]} == 0)) ||
		die "this commit is not v$v: $(IFS=';'; echo "${bad[*]}" | sed 's/;/; /g'): run hack/release/bump.sh $v, write its CHANGELOG entry, and commit"
}

CHART=deploy/helm/lease-exporter/Chart.yaml
KUSTOMIZE_IMAGES=deploy/kustomize/base/workload/kustomization.yaml
chart_field() { sed -n "s/^$1: *\"\{0,1\}\([^\"]*\)\"\{0,1\} *$/\1/p" "$CHART"; }
kustomize_tag() { sed -n 's/^ *newTag: *//p' "$KUSTOMIZE_IMAGES"; }

# archive DIR BINARY OUT: OUT.tar.gz of DIR/BINARY (executable) with LICENSE and README.md, flat,
# as krew and most exporters ship them; reproducible: fixed order, owner, mode and time.
archive() {
	local dir="$1" binary="$2" out="$3"
	install -m 0644 LICENSE README.md "$dir/"
	chmod 0755 "$dir/$binary"
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@${SOURCE_DATE_EPOCH:-0}" \
		-C "$dir" -cf - LICENSE README.md "$binary" | gzip -n >"$out"
}

# tar_dir DIR OUT: a reproducible tar of DIR's contents.
tar_dir() {
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
		-C "$1" -cf "$2" .
}

# retar_gz IN OUT: IN (a .tgz) rewritten reproducibly: helm package stamps each file with the
# time it ran.
retar_gz() {
	local tmp
	tmp="$(mktemp -d)"
	tar -xzf "$1" -C "$tmp"
	# Entries named as helm names them (lease-exporter/...): helm reads no chart under ./.
	(cd "$tmp" && LC_ALL=C find . -mindepth 1 -maxdepth 1 -printf '%P\0' | LC_ALL=C sort -z |
		tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
			--mode='u+rwX,go+rX,go-w' --null -T - -cf -) | gzip -n >"$2"
	rm -rf "$tmp"
}

# sbom TOOLS BINARY OUT: a CycloneDX SBOM of a Go binary (its modules and versions, from the
# build information Go writes into it), with a serial number derived from the binary's hash and
# no timestamp, so the same binary gives the same file.
sbom() {
	local serial
	serial="$(python3 -c 'import hashlib,sys,uuid; print(uuid.uuid5(uuid.NAMESPACE_URL, "lease-exporter:" + hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()).urn)' "$2")"
	"$1/cyclonedx-gomod" bin -json -version "v$VERSION" -std -serial "$serial" -notimestamp -output "$3" "$2"
}

# image_binary LAYOUT ARCH DIR: extracts /bin/lease-exporter of the linux/ARCH image in the OCI
# layout LAYOUT into DIR.
image_binary() {
	mkdir -p "$3"
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys, tarfile
layout, arch, out = sys.argv[1:]
blob = lambda d: f"{layout}/blobs/sha256/{d.split(':', 1)[1]}"
index = json.load(open(blob(json.load(open(f"{layout}/index.json"))["manifests"][0]["digest"])))
for m in index["manifests"]:
    if m["platform"]["architecture"] == arch:
        for layer in json.load(open(blob(m["digest"])))["layers"]:
            with tarfile.open(blob(layer["digest"])) as t:
                for member in t.getmembers():
                    if member.name.lstrip("./") == "bin/lease-exporter":
                        member.name = "lease-exporter"
                        t.extract(member, out)
                        sys.exit(0)
sys.exit(f"no /bin/lease-exporter in the linux/{arch} image of {layout}")
EOF
}
