#!/usr/bin/env bash
# Measures what the GitHub Action costs before catalogbot check starts, the
# two ways action.yml can name its image (docs/action.md#start-time):
#
#   released: the runner pulls the Action image by digest. Measured as a
#     skopeo copy of the linux/amd64 image of the offline release
#     (hack/release-snapshot.sh), pushed to a loopback docker-registry,
#     into an empty OCI layout, RUNS times.
#   action.Dockerfile: the runner builds the image first. There is no
#     container engine here, so this measures its Go build step alone, the
#     same command with a cold build cache (modules already downloaded),
#     BUILDS times; the image pull of golang and the module download come
#     on top of it on a runner.
#
# Needs Debian's docker-registry and skopeo, goreleaser and syft on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-5}"
builds="${BUILDS:-2}"
addr="${MEASURE_REGISTRY:-127.0.0.1:5057}"

tmp="$(mktemp -d)"
cat >"$tmp/config.yml" <<CONFIG
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $tmp/data
http:
  addr: $addr
CONFIG
env -u REGISTRY_AUTH_FILE docker-registry serve "$tmp/config.yml" &
registry=$!
trap 'kill "$registry" 2>/dev/null || true; wait "$registry" 2>/dev/null || true; chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT

RELEASE_PUSH_REGISTRY="$addr" RELEASE_SKIP=sbom ./hack/release-snapshot.sh bin/release/measure >"$tmp/release.log" 2>&1 ||
	{ tail -30 "$tmp/release.log"; exit 1; }
image="$(go run ./hack/release digests -dist bin/release/measure | awk '$1 == "action" { print $3 }')"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "image: $image"

now() { date +%s.%N; }
for i in $(seq "$runs"); do
	rm -rf "$tmp/pull"
	start="$(now)"
	skopeo copy -q --src-tls-verify=false "docker://$image" "oci:$tmp/pull:action" >/dev/null
	end="$(now)"
	printf 'pull %d: %.2f s, %s bytes\n' "$i" "$(echo "$end - $start" | bc)" "$(du -sb "$tmp/pull" | cut -f1)"
done

go mod download
for i in $(seq "$builds"); do
	cache="$tmp/gocache-$i"
	start="$(now)"
	GOCACHE="$cache" CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=dev" \
		-o "$tmp/catalogbot" ./cmd/catalogbot
	end="$(now)"
	printf 'cold go build %d: %.1f s\n' "$i" "$(echo "$end - $start" | bc)"
	rm -rf "$cache"
done
