# catalogbot container image: a static binary on a distroless, non-root base.
# It runs `catalogbot serve` (see deploy/); the GitHub Action uses action.Dockerfile.

# Both bases are pinned by the digests of their multi-arch indexes, so that
# a build of one commit does not move when a tag does: the Go image at the
# patch release whose digest public Dockerfiles pin (golang:1.26.8-bookworm),
# and the same distroless base as .goreleaser.yaml's images (see there for
# where the digest comes from). Move them together, deliberately.
FROM golang:1.26.8-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d AS build
WORKDIR /src
# Modules first, so that source edits reuse the downloaded-modules layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# Static (no cgo) so it runs on a base without libc; -trimpath and -s -w keep
# build paths and debug data out of the binary.
RUN CGO_ENABLED=0 go build -tags json1,containers_image_openpgp -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/catalogbot ./cmd/catalogbot

FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
COPY --from=build /out/catalogbot /catalogbot
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/catalogbot"]
# By default the image is the GitHub App service (deploy/ shows it on
# Kubernetes); any other command replaces this, e.g. `validate /catalog`.
CMD ["serve", "--config", "/etc/catalogbot/config/config.yaml"]
