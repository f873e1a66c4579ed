package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ConfigsDir is where the catalog lives inside the image, the value of the
// configs label. opm serve, catalogd and opm render all read it from there.
const ConfigsDir = "/configs"

// The only modes written. Catalog files are data, so executable bits and
// group/world write bits a checkout may carry are not part of the image;
// they would change the digest without changing the catalog.
const (
	fileMode = 0o644
	dirMode  = 0o755
)

// configsLayer is the /configs layer, built in memory in one pass over the
// catalog: the tar is hashed for its diff ID while it is compressed, and the
// compressed bytes are hashed for the digest, so pushing never compresses
// again.
type configsLayer struct {
	compressed []byte
	digest     v1.Hash
	diffID     v1.Hash
}

var _ v1.Layer = (*configsLayer)(nil)

func (l *configsLayer) Digest() (v1.Hash, error) { return l.digest, nil }
func (l *configsLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }
func (l *configsLayer) Size() (int64, error)     { return int64(len(l.compressed)), nil }
func (l *configsLayer) MediaType() (types.MediaType, error) {
	return types.OCILayer, nil
}
func (l *configsLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.compressed)), nil
}
func (l *configsLayer) Uncompressed() (io.ReadCloser, error) {
	return gzip.NewReader(bytes.NewReader(l.compressed))
}

// newConfigsLayer packs the catalog directory dir as /configs. The tar is a
// function of the catalog's paths and contents only: entries in byte order
// of their paths (filepath.WalkDir reads directories sorted), directories
// included, every mtime set to epoch, uid and gid 0 with no user or group
// names, and the fixed modes above. A symbolic link is stored as the file
// it points to, as docker's ADD of a directory would not follow it but opm
// reading the checkout does; a link to a directory is refused.
//
// The gzip stream is deterministic for a given Go release; compress/gzip
// has kept its output stable, and the diff ID, which is what the catalog
// content is identified by, does not depend on it at all.
func newConfigsLayer(dir string, epoch time.Time) (*configsLayer, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%q is not a directory", dir)
	}

	var buf bytes.Buffer
	digest := sha256.New()
	zw, err := gzip.NewWriterLevel(io.MultiWriter(&buf, digest), gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	diffID := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(zw, diffID))

	root := path.Base(ConfigsDir)
	header := func(name string, typ byte, mode, size int64) *tar.Header {
		return &tar.Header{
			Typeflag: typ,
			Name:     name,
			Mode:     mode,
			Size:     size,
			ModTime:  epoch,
			// PAX, not GNU, for paths over 100 bytes: the standard
			// every runtime reads. Short paths stay plain USTAR.
			Format: tar.FormatPAX,
		}
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := root
		if rel != "." {
			name = path.Join(root, filepath.ToSlash(rel))
		}
		if d.IsDir() {
			return tw.WriteHeader(header(name+"/", tar.TypeDir, dirMode, 0))
		}
		fi, err := os.Stat(p) // follows a link to what it names
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return fmt.Errorf("%s: a link to a directory is not followed; copy the directory instead", p)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: only regular files and directories can be published", p)
		}
		return addFile(tw, header(name, tar.TypeReg, fileMode, fi.Size()), p)
	})
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return &configsLayer{
		compressed: buf.Bytes(),
		digest:     v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", digest.Sum(nil))},
		diffID:     v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", diffID.Sum(nil))},
	}, nil
}

// addFile streams the file at p into the tar under hdr, whose size is the
// file's as stat saw it. A file that changes size meanwhile fails the
// build rather than be packed half-written.
func addFile(tw *tar.Writer, hdr *tar.Header, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, f)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if n != hdr.Size {
		return fmt.Errorf("%s changed while it was read", p)
	}
	return nil
}
