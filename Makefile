# catalogbot: build, test and demo. Needs GNU make and Go; modules are
# downloaded by go on first use. Nothing else: the tests need no C compiler
# and no system libraries (see GOTAGS and CGO_ENABLED below).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
GOFMT := $(shell $(GO) env GOROOT)/bin/gofmt
BIN := bin/catalogbot
# The release version stamped into the binary; "dev" outside a git checkout.
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# The Go modules of this repository; vet, test, lint and tidy run in each.
# Besides the main one: the opm conformance tests (checks/fbc/conformance)
# and the tests that build opm and run catalog images under it
# (publisher/build/imagerun) have their own modules, so that the main module
# does not depend on operator-registry; so do the tests that build the real
# cosign and run it against what catalogbot signs (publisher/sign/cosigncheck).
MODULES := . checks/fbc/conformance publisher/build/imagerun publisher/sign/cosigncheck

# Build tags for every module: the ones operator-registry builds opm with.
# containers_image_openpgp makes containers/image, which the conformance
# tests link through opm's render code, verify signatures with pure Go
# OpenPGP instead of gpgme (cgo and Debian's libgpgme-dev); json1 is
# go-sqlite3's JSON extension, which opm is built with.
GOTAGS := json1,containers_image_openpgp

# vet, test and lint run without cgo, so that they need no C compiler: the
# binary is built without it too (make build), and the parts of
# operator-registry that need cgo (go-sqlite3, gpgme) are not what the
# conformance tests compare. The image-run tests still build their opm with
# cgo when a C compiler is there, as opm is released; without one they build
# it static and say so (publisher/build/imagerun/main_test.go).
CGO_ENABLED ?= 0
export CGO_ENABLED

# The pinned versions of the lint tools and of the Go vulnerability
# database. The database is golang.org/x/vulndb as the module proxy serves
# it: its data/osv holds every report, which vulndb's own indexdb turns into
# the database govulncheck reads with -db file://, so no host besides the
# module proxy is needed. Move VULNDB_VERSION to a newer pseudo-version (go
# list -m golang.org/x/vulndb@latest) to take in new reports.
STATICCHECK_VERSION := v0.8.2
GOVULNCHECK_VERSION := v1.9.0
VULNDB_VERSION := v0.0.0-20261105234957-e22db6528018
TOOLS := $(CURDIR)/bin/tools
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)/staticcheck
GOVULNCHECK := $(TOOLS)/govulncheck-$(GOVULNCHECK_VERSION)/govulncheck
VULNDB := $(CURDIR)/bin/vulndb/$(VULNDB_VERSION)

# The release tools, pinned and installed like the lint tools. goreleaser
# builds the binaries, archives, checksums and SBOMs and, with the ko it
# has built in, the images, without a container daemon, from one
# configuration (.goreleaser.yaml) that the release workflow and
# make release-snapshot share; syft writes the SBOMs it asks for.
GORELEASER_VERSION := v2.15.1
SYFT_VERSION := v1.57.1
GORELEASER := $(TOOLS)/goreleaser-$(GORELEASER_VERSION)/goreleaser
SYFT := $(TOOLS)/syft-$(SYFT_VERSION)/syft
# Where make release-snapshot writes; release-check writes two of them.
DIST ?= dist

FUZZTIME ?= 10s

# The modules staticcheck and govulncheck read: all but the cosign module,
# which holds tests only and whose dependencies are cosign's, in no binary
# of catalogbot.
LINT_MODULES := $(filter-out publisher/sign/cosigncheck,$(MODULES))

# in_modules NAME,CMD[,LIST]: runs CMD in every module of LIST (MODULES by
# default), in all of them even after a failure, then fails naming the
# modules where it failed.
define in_modules
failed=(); \
for mod in $(or $(3),$(MODULES)); do \
  echo "== $(1): $$mod"; \
  (cd "$$mod" && $(2)) || failed+=("$$mod"); \
done; \
if [ "$${#failed[@]}" -gt 0 ]; then echo "$(1) failed in: $${failed[*]}"; exit 1; fi
endef

.PHONY: help build test vet docs docs-check lint staticcheck vulncheck tidy fuzz bench demo demo-app e2e chaos release-tools release-snapshot release-check clean

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/catalogbot (static, version from git describe)
	CGO_ENABLED=0 $(GO) build -tags '$(GOTAGS)' -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/catalogbot

test: ## run the tests of every module (MODULES)
	@cc="$$($(GO) env CC)"; command -v "$${cc%% *}" >/dev/null || \
	  echo "note: no C compiler ($$cc): the image-run tests build opm static and skip TestOPMDynamic; install gcc to run it"
	@$(call in_modules,go test,$(GO) test -tags '$(GOTAGS)' ./...)

vet: ## go vet every module and fail on files gofmt would change
	@$(call in_modules,go vet,$(GO) vet -tags '$(GOTAGS)' ./...)
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

lint: staticcheck vulncheck tidy ## staticcheck, govulncheck and the go mod tidy check, on every module

staticcheck: $(STATICCHECK) ## staticcheck every module (its default checks)
	@$(call in_modules,staticcheck,$(STATICCHECK) -tags '$(GOTAGS)' ./...,$(LINT_MODULES))

vulncheck: $(GOVULNCHECK) $(VULNDB)/index/db.json ## govulncheck every module against the vulnerability database of VULNDB_VERSION
	@want="$$(sed -n 's/^toolchain //p' go.mod)"; have="$$($(GO) env GOVERSION)"; \
	if [ -n "$$want" ] && [ "$$(printf '%s\n%s\n' "$$have" "$$want" | sort -V | head -n 1)" != "$$want" ]; then \
	  echo "!! vulncheck: this Go is $$have, older than go.mod's toolchain $$want, and GOTOOLCHAIN=$$($(GO) env GOTOOLCHAIN) keeps it:"; \
	  echo "!! govulncheck judges the standard library of $$have. Set GOTOOLCHAIN=auto (as .ci/run does) or install $$want."; \
	fi
	@$(call in_modules,govulncheck,$(GOVULNCHECK) -db 'file://$(VULNDB)' -tags '$(GOTAGS)' ./...,$(LINT_MODULES))

tidy: ## fail if go mod tidy would change a module's go.mod or go.sum
	@$(call in_modules,go mod tidy -diff,$(GO) mod tidy -diff)

$(STATICCHECK):
	GOBIN=$(@D) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(GOVULNCHECK):
	GOBIN=$(@D) $(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)

$(GORELEASER):
	GOBIN=$(@D) $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

$(SYFT):
	GOBIN=$(@D) $(GO) install github.com/anchore/syft/cmd/syft@$(SYFT_VERSION)

# The release offline (hack/release-snapshot.sh): what the release workflow
# publishes, with the images pushed to a loopback registry on a local base
# instead of ghcr.io on the pinned public one, and no GitHub release,
# changelog or signatures. docs/releasing.md tells the difference.
release-snapshot: $(GORELEASER) $(SYFT) ## release offline into DIST (default dist): binaries, archives, checksums, SBOMs, images in a loopback registry; prints the image digests
	PATH='$(dir $(GORELEASER)):$(dir $(SYFT))':"$$PATH" ./hack/release-snapshot.sh '$(DIST)'

release-tools: $(GORELEASER) $(SYFT) ## install the pinned goreleaser and syft under bin/tools

# print-VAR prints a variable of this file, for the release workflow,
# which takes the tools' versions from here.
print-%:
	@echo '$($*)'

release-check: $(GORELEASER) $(SYFT) ## release offline twice and fail unless every binary, archive and image digest is the same
	$(MAKE) --no-print-directory release-snapshot DIST=bin/release/check-a
	$(MAKE) --no-print-directory release-snapshot DIST=bin/release/check-b
	bin/release/release compare bin/release/check-a bin/release/check-b

# The database, built from the OSV files of the pinned vulndb module. The
# files in the repository carry no dates, so the index's "modified", which
# govulncheck prints, is the time of the vulndb commit.
$(VULNDB)/index/db.json:
	@echo "building the Go vulnerability database of golang.org/x/vulndb@$(VULNDB_VERSION) (from the module proxy)"
	@src="$$($(GO) mod download -json golang.org/x/vulndb@$(VULNDB_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p')"; \
	if [ ! -d "$$src/data/osv" ]; then echo "golang.org/x/vulndb@$(VULNDB_VERSION) has no data/osv: cannot build the vulnerability database"; exit 1; fi; \
	rm -rf '$(VULNDB).tmp'; \
	$(GO) run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) -vulns "$$src/data/osv" -out '$(VULNDB).tmp'; \
	modified="$$($(GO) list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' golang.org/x/vulndb@$(VULNDB_VERSION))"; \
	printf '{"modified":"%s"}\n' "$$modified" >'$(VULNDB).tmp/index/db.json'; \
	gzip -nf -k '$(VULNDB).tmp/index/db.json'; \
	rm -rf '$(VULNDB)'; mv '$(VULNDB).tmp' '$(VULNDB)'

# Every Fuzz function in any *_test.go is found by grep, so new targets run
# without touching this file. Each runs in the module that holds it.
fuzz: ## run every fuzz target for FUZZTIME (default 10s)
	@{ grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . || true; } | sort | while read -r file; do \
	  dir="$$(dirname "$$file")"; mod="$$dir"; \
	  while [ ! -f "$$mod/go.mod" ]; do mod="$$(dirname "$$mod")"; done; \
	  pkg=".$${dir#"$$mod"}"; \
	  for name in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p' "$$file"); do \
	    echo "== fuzz $$name in $$pkg (module $$mod)"; \
	    (cd "$$mod" && $(GO) test -tags '$(GOTAGS)' -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) "$$pkg") || exit 1; \
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

# The chaos suite (cmd/catalogbot's TestChaos): CHAOS_SEEDS seeded
# schedules of faults (replicas killed, mid-fetch among other moments;
# PostgreSQL stopped; GitHub failing, slow, silent or on another clock; a
# git cache disk full, which needs root to mount; a replica's own clock
# apart; a pull request on a registry that never answers) against two
# serve processes on one PostgreSQL, each schedule checked against the
# service's invariants. About 21 s a schedule on two cores; .ci/run runs
# 20.
CHAOS_SEEDS ?= 50
chaos: ## run CHAOS_SEEDS (default 50) seeded schedules of faults against two serve replicas on PostgreSQL
	CATALOGBOT_CHAOS_SEEDS=$(CHAOS_SEEDS) $(GO) test -tags '$(GOTAGS)' -count=1 -timeout 60m -run '^TestChaos$$' ./cmd/catalogbot

clean: ## remove build output, the lint tools and the vulnerability database
	rm -rf bin
