# The image of the GitHub Action in action.yml on a branch without a
# release: the same static binary as Dockerfile, run as root. A release
# pins action.yml to the image goreleaser built instead (kos id action in
# .goreleaser.yaml), which the runner pulls in seconds rather than
# building this (docs/action.md). GitHub runs container actions as root
# and creates the files a step writes ($GITHUB_OUTPUT,
# $GITHUB_STEP_SUMMARY) as the runner's user, which the service image's
# non-root user cannot write. The checks only read the workspace, through
# go-git, and never run its content.

# Both bases are pinned by the digests of their multi-arch indexes, so that
# a build of one commit does not move when a tag does: the Go image at the
# patch release whose digest public Dockerfiles pin (golang:1.26.8-bookworm),
# and the same distroless base as .goreleaser.yaml's images (see there for
# where the digest comes from). Move them together, deliberately.
FROM golang:1.26.8-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -tags json1,containers_image_openpgp -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/catalogbot ./cmd/catalogbot

# The nonroot variant, as the service's, with root restored: one base to
# pin and to move.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
USER 0:0
COPY --from=build /out/catalogbot /catalogbot
ENTRYPOINT ["/catalogbot"]
