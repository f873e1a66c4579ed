#!/usr/bin/env bash
# Shows catalogbot on the fixture catalogs: the valid one passes, the broken
# one fails with every planted error reported at once, and -o opm prints the
# single message opm itself stops at. Then a pull request to a catalog
# repository made of the valid catalog, checked as the App and the Action
# check it: a non-owner's change that breaks a package is refused with the
# error's file and line and the owners to ask; the owner's approval of a
# valid change makes it mergeable; an owner's change that removes a
# released bundle is refused by the release guard. Then the publisher, offline: the
# catalog.yaml of testdata/demo, whose references are catalog images in OCI
# layouts generated from the valid catalog's packages, is assembled,
# validated and published to an OCI layout; a second rebuild finds nothing
# changed and keeps the digest; re-pushing the references under the same
# tag is reported as drift and published anew. In between, a template pull
# request: a semver template and its output change together and pass,
# offline; the template alone is refused. `make demo` builds
# bin/catalogbot first.
#
# Exits 0 only if every step ended with the exit status it should.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${CATALOGBOT:-bin/catalogbot}
if [ ! -x "$bin" ]; then
	echo "demo: $bin not found; run 'make demo', which builds it" >&2
	exit 2
fi

failures=0

# step TITLE WANT CMD...: runs CMD and compares its exit status with WANT.
# A non-zero status is an expected outcome here, so it must not trip set -e.
step() {
	local title=$1 want=$2 rc=0
	shift 2
	printf '\n== %s\n$ %s\n' "$title" "$*"
	"$@" || rc=$?
	if [ "$rc" -eq "$want" ]; then
		printf -- '-> exit status %d, as expected\n' "$rc"
	else
		printf -- '-> exit status %d, expected %d\n' "$rc" "$want"
		failures=$((failures + 1))
	fi
}

step "A valid catalog" 0 \
	"$bin" validate testdata/catalogs/valid
step "A broken catalog: every error at once, each with file:line" 1 \
	"$bin" validate testdata/catalogs/broken
step "The same catalog as opm reports it: the first error only" 1 \
	"$bin" validate -o opm testdata/catalogs/broken

# check TITLE CONDITION...: records a failure when the test is false.
check() {
	local title=$1
	shift
	if "$@"; then
		printf -- '-> %s, as expected\n' "$title"
	else
		printf -- '-> NOT %s\n' "$title"
		failures=$((failures + 1))
	fi
}

# The reference images: generated, never committed, and the same bytes on
# every run (fixed times and order), so the digests below are stable.
layouts=testdata/demo/layouts
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A catalog repository: the valid catalog, each package owned by its team,
# and two pull requests from mallory's branches. Git here is the test bench
# only; catalogbot reads the commits with go-git.
repo=$work/repo
mkdir -p "$repo/catalog"
cp -R testdata/catalogs/valid/. "$repo/catalog/"
printf 'approvers:\n  - root-admin\n' >"$repo/OWNERS"
printf 'OWNERS\n' >"$repo/catalog/.indexignore"
printf 'approvers:\n  - alice\n' >"$repo/catalog/cert-rotator/OWNERS"
printf 'approvers:\n  - bob\n' >"$repo/catalog/kv-store-operator/OWNERS"
demogit() {
	GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com GIT_COMMITTER_NAME=demo \
		GIT_COMMITTER_EMAIL=demo@example.com git -C "$repo" "$@" >/dev/null
}
demogit init -q -b main
demogit add -A
demogit commit -q -m "the catalog"
demogit checkout -q -b broken
sed -i 's/^defaultChannel: .*/defaultChannel: nightly/' "$repo/catalog/cert-rotator/catalog.yaml"
demogit commit -q -am "cert-rotator: default to nightly"
demogit checkout -q -b labelled main
printf -- '  - type: example.com/support\n    value: community\n' >>"$repo/catalog/cert-rotator/catalog.yaml"
demogit commit -q -am "cert-rotator: support label"
# Registries are not reachable offline: the image and reference checks are
# switched off, the rest is the check as it runs on GitHub.
offline=(--images=false --render=false)
step "A pull request by a non-owner that breaks a package: refused, with file:line and whom to ask" 1 \
	"$bin" check --repo "$repo" --base main --head broken --author mallory "${offline[@]}"
step "A valid pull request by a non-owner, approved by the package's owner: mergeable at its head" 0 \
	"$bin" check --repo "$repo" --base main --head labelled --author mallory --approve alice "${offline[@]}"

# A template pull request (testdata/demo/template): the policy maps a
# semver template to its output directory, and the head adds the released
# widget 1.1.0 to a fast channel. Rendering is on, yet no registry is asked:
# every bundle is pinned by digest and already in the base's output, which
# is trusted. The same template change without its output is refused with
# the diff and the command that regenerates it.
trepo=$work/template-repo
mkdir -p "$trepo"
cp -R testdata/demo/template/base/. "$trepo/"
printf 'approvers:\n  - alice\n' >"$trepo/OWNERS"
printf 'catalog:\n  roots: [catalog]\n  templates:\n    - {template: templates/widget.yaml, output: catalog/widget}\n' >"$trepo/.catalogbot.yaml"
tgit() {
	GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com GIT_COMMITTER_NAME=demo \
		GIT_COMMITTER_EMAIL=demo@example.com git -C "$trepo" "$@" >/dev/null
}
tgit init -q -b main
tgit add -A
tgit commit -q -m "widget: template and catalog"
tgit checkout -q -b template-only
cp testdata/demo/template/head/templates/widget.yaml "$trepo/templates/widget.yaml"
tgit commit -q -am "widget: 1.1.0 in fast, output not regenerated"
tgit checkout -q -b fast main
cp -R testdata/demo/template/head/. "$trepo/"
tgit commit -q -am "widget: 1.1.0 in fast"
step "A template change without its output: refused, with the diff and the command that regenerates it" 1 \
	"$bin" check --repo "$trepo" --base main --head template-only --author alice --images=false
step "A template pull request with its output regenerated: passes, the bundles taken from the base" 0 \
	"$bin" check --repo "$trepo" --base main --head fast --author alice --images=false

# The release guard: the package's own owner drops cert-rotator 1.3.0 from
# stable-v1 (its entry, the replaces that led from it, and its bundle).
# The catalog stays valid, but clusters on 1.3.0 lose their upgrade path;
# the check names them and points to olm.deprecations instead.
demogit checkout -q -b prune main
sed -i '11d;13d;28,47d' "$repo/catalog/cert-rotator/catalog.yaml"
demogit commit -q -am "cert-rotator: drop 1.3.0"
step "A pull request by the package's owner that removes a released bundle: refused by the release guard" 1 \
	"$bin" check --repo "$repo" --base main --head prune --author alice "${offline[@]}"

step "Generate the demo's catalog images into OCI layouts ($layouts)" 0 \
	go run ./publisher/demo/gen -from testdata/catalogs/valid "$layouts"

step "Assemble testdata/demo/catalog.yaml" 0 \
	"$bin" assemble testdata/demo/catalog.yaml -o "$work/assembled"
step "Validate the assembled catalog" 0 \
	"$bin" validate "$work/assembled/demo-catalog"

target="oci:$work/published:latest"
# rebuild runs the scheduled job once, keeping its output for the checks.
rebuild() {
	printf '  = %s rebuild testdata/demo/catalog.yaml --image %s --base scratch --cache-dir %s\n' \
		"$bin" "$target" "$work/cache"
	"$bin" rebuild testdata/demo/catalog.yaml --image "$target" --base scratch \
		--cache-dir "$work/cache" --log-level warn 2>&1 | tee "$work/out"
}
step "Rebuild and publish to an OCI layout" 0 rebuild
first=$(awk '$2 == "published" {print $1}' "$work/out")
check "published, digest ${first:-none}" test -n "$first"

step "Rebuild again: nothing moved" 0 rebuild
second=$(awk '$2 == "unchanged" {print $1}' "$work/out")
check "unchanged, with the same digest" test -n "$second" -a "$second" = "$first"

step "Re-push the references under the same tag (revision 2)" 0 \
	go run ./publisher/demo/gen -from testdata/catalogs/valid -revision 2 "$layouts"
step "Rebuild: drift reported, a new digest published" 0 rebuild
third=$(awk '$2 == "published" {print $1}' "$work/out")
check "both references reported as moved" test "$(grep -c '^drift: reference .* moved' "$work/out")" -eq 2
check "published, digest ${third:-none} differs from the first" test -n "$third" -a "$third" != "$first"

# Leave the layouts as a fresh `make demo` writes them.
go run ./publisher/demo/gen -from testdata/catalogs/valid "$layouts" >/dev/null

echo
if [ "$failures" -gt 0 ]; then
	echo "demo: $failures step(s) ended with an unexpected exit status" >&2
	exit 1
fi
echo "demo: every step ended as expected"
