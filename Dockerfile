# catalogbot container image: a static binary on a distroless, non-root base.
# It runs `catalogbot serve` (see deploy/); the GitHub Action uses action.Dockerfile.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so that source edits reuse the downloaded-modules layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# Static (no cgo) so it runs on a base without libc; -trimpath and -s -w keep
# build paths and debug data out of the binary.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/catalogbot ./cmd/catalogbot

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/catalogbot /catalogbot
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/catalogbot"]
# By default the image is the GitHub App service (deploy/ shows it on
# Kubernetes); any other command replaces this, e.g. `validate /catalog`.
CMD ["serve", "--config", "/etc/catalogbot/config/config.yaml"]
