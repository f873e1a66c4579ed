# catalogbot: build, test and demo. Needs GNU make and Go; modules are
# downloaded by go on first use.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
GOFMT := $(shell $(GO) env GOROOT)/bin/gofmt
BIN := bin/catalogbot
# The release version stamped into the binary; "dev" outside a git checkout.
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# The opm conformance tests live in their own module so that the main
# module does not depend on operator-registry.
CONFORMANCE := checks/fbc/conformance
# The tests that run built catalog images build opm (cgo: needs gcc) and
# use its gRPC client, so they too have their own module.
IMAGERUN := publisher/build/imagerun
FUZZTIME ?= 10s

.PHONY: help build test vet docs docs-check fuzz bench demo demo-app e2e clean

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/catalogbot (static, version from git describe)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/catalogbot

test: ## run the tests of the main module, the conformance module and the image-run module
	$(GO) test ./...
	cd $(CONFORMANCE) && $(GO) test ./...
	cd $(IMAGERUN) && $(GO) test ./...

vet: ## go vet every module and fail on files gofmt would change
	$(GO) vet ./...
	cd $(CONFORMANCE) && $(GO) vet ./...
	cd $(IMAGERUN) && $(GO) vet ./...
	@unformatted="$$($(GOFMT) -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt -l: these files need formatting:"; echo "$$unformatted"; exit 1; fi

# The CLI reference (docs/cli) and the generated blocks of README.md,
# docs/action.md and action.yml come from the cobra commands themselves,
# through cmd/catalogbot's TestDocs: with -update it writes them, without
# it fails on anything stale. A new command needs only make docs.
DOCSTEST := $(GO) test -count=1 -run '^TestDocs$$' ./cmd/catalogbot

docs: ## regenerate docs/cli and the generated blocks of the docs from the commands
	$(DOCSTEST) -update

docs-check: ## fail when docs/cli or a generated block is stale (run make docs)
	$(DOCSTEST)

# Every Fuzz function in any *_test.go is found by grep, so new targets run
# without touching this file. Each runs in the module that holds it.
fuzz: ## run every fuzz target for FUZZTIME (default 10s)
	@{ grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . || true; } | sort | while read -r file; do \
	  dir="$$(dirname "$$file")"; mod="$$dir"; \
	  while [ ! -f "$$mod/go.mod" ]; do mod="$$(dirname "$$mod")"; done; \
	  pkg=".$${dir#"$$mod"}"; \
	  for name in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p' "$$file"); do \
	    echo "== fuzz $$name in $$pkg (module $$mod)"; \
	    (cd "$$mod" && $(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) "$$pkg") || exit 1; \
	  done; \
	done

bench: ## run the benchmarks (hack/bench.sh)
	./hack/bench.sh

demo: build ## build, then validate the fixtures, check two pull requests, assemble and publish, offline (hack/demo.sh)
	./hack/demo.sh

# The App's demo is cmd/catalogbot's TestDemoApp, the test of the whole
# App path, run with -demo so that it tells what happens: the test binary
# holds the fake GitHub, which the catalogbot binary does not ship.
demo-app: ## run the real App against a fake GitHub and a local registry: a pull request checked, approved, merged and published, offline
	$(GO) test -c -o bin/demo-app.test ./cmd/catalogbot
	./bin/demo-app.test -test.run '^TestDemoApp$$' -demo

# The end-to-end tests need Debian's docker-registry and skopeo; without
# them they skip, except under CI=true, where they fail.
e2e: ## end-to-end tests against a local docker-registry
	$(GO) test -tags e2e -count=1 ./checks/images/... ./publisher/... ./webhook/... ./cmd/...

clean: ## remove build output
	rm -rf bin
