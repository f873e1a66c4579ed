#!/usr/bin/env bash
# Runs the release of .goreleaser.yaml offline, as make release-snapshot:
# binaries, archives, checksums and SBOMs into DIST (default dist), and the
# two images pushed to a loopback registry on a base of the project's own
# (hack/release base), since the machine that builds may have neither a
# container daemon nor a way to the public base. Prints the image digests.
#
# goreleaser's --snapshot hands ko's images to a Docker daemon, so this is
# a release proper with the GitHub release, the changelog and the
# signatures left out, at the version LOCAL_VERSION (default
# v0.0.0-local). Needs goreleaser and syft on PATH (the Makefile puts the
# pinned ones there). RELEASE_PUSH_REGISTRY, a loopback host:port, pushes
# the images to another registry than the one that serves the base;
# RELEASE_SKIP adds to goreleaser's --skip (sbom, say).
set -euo pipefail
cd "$(dirname "$0")/.."

dist="${1:-dist}"
version="${LOCAL_VERSION:-v0.0.0-local}"
work="bin/release/$(basename "$dist")"
mkdir -p "$work"
go build -o bin/release/release ./hack/release

rm -f "$work/registry.env"
bin/release/release base -layout "$work/base" -env "$work/registry.env" ${RELEASE_REGISTRY_ADDR:+-addr "$RELEASE_REGISTRY_ADDR"} &
registry=$!
trap 'kill "$registry" 2>/dev/null || true; wait "$registry" 2>/dev/null || true' EXIT
for _ in $(seq 300); do
	[ -s "$work/registry.env" ] && break
	kill -0 "$registry" 2>/dev/null || { echo "the loopback registry did not start" >&2; exit 1; }
	sleep 0.1
done
# shellcheck source=/dev/null
. "$work/registry.env"

bin/release/release config -in .goreleaser.yaml -out "$work/goreleaser.yaml" \
	-base "$RELEASE_BASE" -registry "${RELEASE_PUSH_REGISTRY:-$RELEASE_REGISTRY}" -dist "$dist"
# goreleaser asks git for the remote's URL, which a fresh clone has and a
# local repository may not: name the project's, for this command only.
if ! git remote get-url origin >/dev/null 2>&1; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url \
		GIT_CONFIG_VALUE_0=https://github.com/catalogbot/catalogbot.git
fi
GORELEASER_CURRENT_TAG="$version" goreleaser release --clean \
	--config "$work/goreleaser.yaml" --skip=validate,announce,sign${RELEASE_SKIP:+,$RELEASE_SKIP}

echo "images (kos id, digest, reference) of $version, base $RELEASE_BASE:"
bin/release/release digests -dist "$dist"
