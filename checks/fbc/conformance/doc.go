// Package conformance holds the differential tests of checks/fbc and
// publisher/render against the reference implementation,
// operator-framework/operator-registry v1.65.0.
//
// It is a separate Go module so that the main module never depends on
// operator-framework code; the main module's `go test ./...` does not enter
// it. Run it with `make test`, or:
//
//	cd checks/fbc/conformance && CGO_ENABLED=0 go test -tags json1,containers_image_openpgp ./...
//
// (add -short to validate only three versions of the real corpus).
//
// The render test links operator-registry's alpha/action, and with it
// containers/image and go-sqlite3. The containers_image_openpgp tag, which
// opm is released with, makes containers/image use its pure Go OpenPGP code:
// without it the build needs cgo and the gpgme headers (Debian's
// libgpgme-dev). Nothing the tests compare needs cgo, so they run without
// it and need no C compiler.
//
// Packages:
//
//   - opmref: the oracle, LoadFS + ConvertToModel + Model.Validate, with
//     one load goroutine so that file order is lexical and deterministic.
//   - cmd/refvalidate: times the reference on catalog directories the way
//     `opm validate` runs it, for benchmarks.
//   - mutate: deterministic mutations of valid seed catalogs.
//   - errtree: parses opm's error trees and compares them with unordered
//     siblings.
//
// The tests (conformance_test.go):
//
//   - TestGoldenParity: every case of ../testdata/opm-validate-golden.json (shared with the main module's golden test).
//   - TestCorpusParity: ../shared/corpus/community-operators-prod.tar.zst
//     (skipped when ../shared is absent).
//   - TestMutationParity: thousands of mutated catalogs.
//
// And in render_test.go:
//
//   - TestRenderBundleDirParity: every bundle directory (manifests/ and
//     metadata/) of the operator-registry v1.65.0 module, found in the
//     module cache, and of publisher/render/testdata, rendered by
//     alpha/action.Render and by publisher/render in json and yaml, with
//     no migration, each migration level opm knows, and --migrate, each
//     with and without an image reference template. Output bytes, and for
//     directories opm refuses the error message, must be equal.
//
// And in truth_test.go:
//
//   - TestTruthRenderParity: the bundle images of the bundle truthfulness
//     tests (publisher/render/bundletest: a faithful bundle and one per kind
//     of lie), pushed to a registry on loopback and pulled by digest, rendered
//     by alpha/action.Render over opm's containerd registry client and by
//     publisher/render, with every migration level, in json and yaml. Output
//     bytes must be equal: the truthfulness check compares blobs with what
//     opm itself makes of their images.
//
// The golden file and the spec describe opm master; v1.65.0 differs on a few
// rules (spec §9). Those are listed in the tests and handled explicitly.
//
// Environment knobs: CONFORMANCE_CASE=<substring> runs only matching mutation
// cases; CONFORMANCE_VERBOSE=1 prints every mismatch in full;
// CONFORMANCE_SELFTEST=1 puts the oracle (in another file order) in place of
// checks/fbc to check the harness itself: then only the golden exceptions
// c-b-release-bad, m-skiprange-bad and m-many-errors-one-bundle may fail.
package conformance
