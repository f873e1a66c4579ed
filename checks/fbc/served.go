package fbc

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
)

// ServedView describes the catalog as catalogd serves it at /api/v1/all.
type ServedView struct {
	// Size is the length in bytes of the JSON Lines stream.
	Size int64 `json:"size"`
	// Digest is the stream's sha256, "sha256:<hex>".
	Digest string `json:"digest"`
	// Objects is the number of lines: one per FBC object.
	Objects int `json:"objects"`
}

// Served writes to w what catalogd serves for the catalog rooted at fsys
// at /api/v1/all, and describes it. catalogd walks the unpacked configs
// directory as opm's loader does, one file at a time in lexical order
// (the files opm validate reads, .indexignore applied), and writes each
// object as opm's declcfg.Meta re-encodes it: keys sorted, numbers through
// float64, no HTML escaping, one object per line. So a publish can state,
// before any cluster pulls the image, the size and digest of what every
// client of the catalog will download.
//
// The catalog is expected to be valid (publish validates it first); a file
// that cannot be listed, read or decoded is an error naming it, and its
// line where known.
func Served(ctx context.Context, fsys fs.FS, w io.Writer) (ServedView, error) {
	files, errs := listFiles(fsys)
	if len(errs) > 0 {
		return ServedView{}, fmt.Errorf("%s: %w", errs[0].pos.File, errs[0].err)
	}
	h := sha256.New()
	out := io.MultiWriter(w, h)
	var view ServedView
	for _, p := range files {
		if err := ctx.Err(); err != nil {
			return ServedView{}, err
		}
		data, err := readFile(fsys, p)
		if err != nil {
			return ServedView{}, fmt.Errorf("%s: %w", p, err)
		}
		var werr error
		decodeStream(data, nil, func(d *document) bool {
			if d.err != nil {
				werr = fmt.Errorf("%s:%d: %w", p, d.line, d.err)
				return false
			}
			if len(d.meta.Blob) == 0 {
				// An empty document (only comments, or separators)
				// decodes to nothing, and catalogd writes nothing.
				return true
			}
			n, err := out.Write(d.meta.Blob)
			view.Size += int64(n)
			view.Objects++
			werr = err
			return err == nil
		})
		if werr != nil {
			return ServedView{}, werr
		}
	}
	view.Digest = fmt.Sprintf("sha256:%x", h.Sum(nil))
	return view, nil
}
