// Package imagerun holds the tests that run the catalog images
// publisher/build makes, rather than read them: an OLM v0 image is
// unpacked as a container runtime would unpack it and its command is
// started, then asked for its packages over opm's gRPC API; an OLM v1
// image is unpacked as catalogd unpacks it and compared with the catalog.
//
// It is a separate Go module so that the main module never depends on
// operator-registry: the tests build opm from operator-registry v1.65.0
// (with cgo, as opm is released) and use its gRPC client. Run them with
// `make test`, or:
//
//	cd publisher/build/imagerun && go test -tags json1,containers_image_openpgp ./...
//
// Without a C compiler (go env CC not on PATH) opm is built without cgo,
// static: every test runs, but a base's own loader and libraries go
// unexercised, which TestOPMDynamic reports as a skip, and under CI=true
// as a failure. CATALOGBOT_TEST_OPM=/path/to/opm uses an opm built
// already instead of building one.
//
// The OLM v0 tests chroot into the unpacked image and run opm as the
// image's user when they run as root, as a runtime would; otherwise they
// run it with the image's paths rewritten to the unpacked directories.
//
// BenchmarkPublishCache measures a publish with the cache layer of the
// ~100 MB synthetic catalog the publisher/build benchmarks use.
package imagerun
