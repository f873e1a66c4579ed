package fbc

import (
	"context"
	"io/fs"

	"github.com/catalogbot/catalogbot/checks"
)

// Options tune a validation run.
type Options struct {
	// Concurrency is the number of files decoded at once; 0 means GOMAXPROCS.
	Concurrency int

	// Images asks for Result.Images: every image reference of every bundle,
	// with its position.
	Images bool

	// full keeps every blob whole, for LoadConfig and LoadPlacedWhole.
	full bool

	// owned is a load whose blobs its caller owns (LoadConfig's): it
	// decodes for itself, never sharing a decoded file through the
	// review's Cache.
	owned bool

	// docs, under a review's Cache, are the documents a whole load typed
	// already, by their text (see docMemo).
	docs *docMemo

	// exact disables the fast path for plain YAML, for tests that hold the
	// fast path to the exact one.
	exact bool

	// mentions reads only which packages each document mentions, for
	// Mentions; what it loads is good for nothing else.
	mentions bool

	// blobs keeps each document's Blob in the file's result, for
	// Cache.Blobs; with full and no config kept.
	blobs bool
}

// Stats counts what a run read.
type Stats struct {
	Files        int   `json:"files"`
	Bytes        int64 `json:"bytes"`
	Packages     int   `json:"packages"`
	Channels     int   `json:"channels"`
	Bundles      int   `json:"bundles"`
	Deprecations int   `json:"deprecations"`
	Others       int   `json:"others"`
}

// Result is the outcome of validating one catalog tree.
type Result struct {
	// Findings lists every problem found, in file order. Errors make the
	// catalog invalid; warnings never do.
	Findings []checks.Finding
	// OPMMessage is the exact text `opm validate -o json` reports in
	// error.message for this catalog, and "" when opm would accept it.
	OPMMessage string
	Stats      Stats
	// Images lists the image references of the catalog's bundles, in file
	// order, when Options.Images is set. Bundles whose blob failed to load
	// are missing from it.
	Images []ImageRef
	// PackageNames are the names of every package the catalog's blobs
	// define or belong to (olm.package names, the package of channels,
	// bundles and deprecations, and bundles' olm.package properties),
	// sorted and unique. Callers that validate part of a larger catalog
	// use them to find the other parts that could interact with it.
	PackageNames []string
	// PackagePlaces says where each of PackageNames is mentioned: one
	// blob of each file that mentions it, in file order.
	PackagePlaces map[string][]Place

	// fastDocs counts the documents the fast path decoded, for tests.
	fastDocs int
}

// Place is a position in the catalog.
type Place struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// ImageKind says where in a bundle an image reference appears.
type ImageKind string

const (
	// BundleImage is an olm.bundle's image field.
	BundleImage ImageKind = "bundle"
	// RelatedImage is an entry of an olm.bundle's relatedImages.
	RelatedImage ImageKind = "related"
)

// ImageRef is one image reference and where it is written.
type ImageRef struct {
	Image   string    `json:"image"`
	Kind    ImageKind `json:"kind"`
	Name    string    `json:"name,omitempty"` // the relatedImages name, if any
	File    string    `json:"file"`
	Line    int       `json:"line"`
	Package string    `json:"package"`
	Bundle  string    `json:"bundle"`
}

// Valid reports whether opm would accept the catalog.
func (r *Result) Valid() bool { return r.OPMMessage == "" }

// Validate loads the catalog rooted at fsys and validates it. The returned
// error is reserved for problems that prevent any verdict (a cancelled
// context, a git object missing or misread); problems inside the tree,
// files the file system refuses to read included, are findings.
func Validate(ctx context.Context, fsys fs.FS, opts Options) (*Result, error) {
	return validate(ctx, fsys, opts)
}
