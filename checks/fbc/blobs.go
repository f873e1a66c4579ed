package fbc

import (
	"crypto/sha256"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// Blob is one document of a catalog file as ownership sees it: the package
// it belongs to and a digest of its content, so that two versions of a file
// can be compared blob by blob.
type Blob struct {
	Schema string
	// Package is the package the blob belongs to: an olm.package's name,
	// every other blob's package field; "" for a blob that names none.
	Package string
	Line    int
	// Sum is the SHA-256 of the blob re-encoded canonically (sorted keys),
	// so that layout and key order do not count as a change.
	Sum [sha256.Size]byte
}

// Blobs lists the documents of one catalog file, split and decoded as the
// loader does. Documents that do not decode are left out: the validation
// of the same file reports them as errors, which block a merge on their
// own.
func Blobs(data []byte) []Blob {
	var out []Blob
	decodeStream(data, nil, func(d *document) bool {
		if d.err != nil {
			return true
		}
		b := Blob{Schema: d.meta.Schema, Package: d.meta.Package, Line: d.line, Sum: sha256.Sum256(d.meta.Blob)}
		if d.meta.Schema == declcfg.SchemaPackage {
			b.Package = d.meta.Name
		}
		out = append(out, b)
		return true
	})
	return out
}
