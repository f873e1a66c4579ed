# The image of the GitHub Action in action.yml: the same static binary as
# Dockerfile, run as root. GitHub runs container actions as root and creates
# the files a step writes ($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY) as the
# runner's user, which the service image's non-root user cannot write. The
# checks only read the workspace, through go-git, and never run its content.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/catalogbot ./cmd/catalogbot

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/catalogbot /catalogbot
ENTRYPOINT ["/catalogbot"]
