#!/usr/bin/env bash
# extract.sh REPO: rewrites commits.json and blobs/ from a clone of
# redhat-openshift-ecosystem/community-operators-prod (see README.md).
# Each commit of the slice is kept with its metadata and the part of its
# tree the backtest reads: the packages below, in every catalog, and their
# ci.yaml. The test builds a git repository from them again.
set -euo pipefail
repo=${1:?usage: extract.sh REPO}
cd "$(dirname "$0")"
# The base, then each first-parent commit after it, oldest first.
commits=(63d2e8f82 851305a16 5cb51bdb4 6db0653cf dd61cb486)
keep='^(catalogs/v[^/]+/(kubeturbo|prometurbo)/|operators/(kubeturbo|prometurbo)/ci\.yaml$)'
rm -rf blobs && mkdir blobs
for c in "${commits[@]}"; do
	tree=$(git -C "$repo" ls-tree -r "$c" | awk -v re="$keep" '$4 ~ re {print $3 "\t" $4}')
	while IFS=$'\t' read -r blob path; do
		[ -n "$blob" ] && [ ! -f "blobs/$blob" ] && git -C "$repo" cat-file blob "$blob" >"blobs/$blob"
	done <<<"$tree"
	jq -n --arg id "$(git -C "$repo" rev-parse "$c")" \
		--arg an "$(git -C "$repo" log -1 --format=%an "$c")" --arg ae "$(git -C "$repo" log -1 --format=%ae "$c")" --arg ad "$(git -C "$repo" log -1 --format=%aI "$c")" \
		--arg cn "$(git -C "$repo" log -1 --format=%cn "$c")" --arg ce "$(git -C "$repo" log -1 --format=%ce "$c")" --arg cd "$(git -C "$repo" log -1 --format=%cI "$c")" \
		--arg msg "$(git -C "$repo" log -1 --format=%B "$c")" --arg tree "$tree" \
		'{id: $id, author: {name: $an, email: $ae, when: $ad}, committer: {name: $cn, email: $ce, when: $cd}, message: $msg,
		  files: ($tree | split("\n") | map(select(. != "") | split("\t") | {(.[1]): .[0]}) | add // {})}'
done | jq -s . >commits.json
