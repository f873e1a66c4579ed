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
	"strings"
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

// memLayer is a layer this package packs (the /configs layer, the opm
// cache layer), held compressed in memory.
type memLayer struct {
	compressed []byte
	digest     v1.Hash
	diffID     v1.Hash
}

var _ v1.Layer = (*memLayer)(nil)

func (l *memLayer) Digest() (v1.Hash, error) { return l.digest, nil }
func (l *memLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }
func (l *memLayer) Size() (int64, error)     { return int64(len(l.compressed)), nil }
func (l *memLayer) MediaType() (types.MediaType, error) {
	return types.OCILayer, nil
}
func (l *memLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.compressed)), nil
}
func (l *memLayer) Uncompressed() (io.ReadCloser, error) {
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
func newConfigsLayer(dir string, epoch time.Time) (*memLayer, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%q is not a directory", dir)
	}
	root := path.Base(ConfigsDir)
	return packLayer(func(tw *tar.Writer) error {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
				return tw.WriteHeader(header(name+"/", tar.TypeDir, dirMode, 0, epoch))
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
			return addFile(tw, header(name, tar.TypeReg, fileMode, fi.Size(), epoch), p)
		})
		if err != nil {
			return fmt.Errorf("pack %s: %w", dir, err)
		}
		return nil
	})
}

// newTreeLayer packs the directory dir, which a program wrote, as target
// (an absolute path) in the same fixed way as the catalog, except that
// each entry keeps its permission bits, which the program chose, and
// belongs to uid:gid. target's parents are not entries, so the base's
// own (such as /tmp and its sticky bit) stay as they are.
func newTreeLayer(dir, target string, epoch time.Time, uid, gid int) (*memLayer, error) {
	root := strings.TrimPrefix(path.Clean(target), "/")
	return packLayer(func(tw *tar.Writer) error {
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
			fi, err := d.Info()
			if err != nil {
				return err
			}
			var h *tar.Header
			switch {
			case fi.IsDir():
				h = header(name+"/", tar.TypeDir, int64(fi.Mode().Perm()), 0, epoch)
			case fi.Mode().IsRegular():
				h = header(name, tar.TypeReg, int64(fi.Mode().Perm()), fi.Size(), epoch)
			default:
				return fmt.Errorf("%s: only regular files and directories can be packed", p)
			}
			h.Uid, h.Gid = uid, gid
			if h.Typeflag == tar.TypeDir {
				return tw.WriteHeader(h)
			}
			return addFile(tw, h, p)
		})
	})
}

// header is a tar header with every field but these fixed: root owner
// without names, mtime epoch.
func header(name string, typ byte, mode, size int64, epoch time.Time) *tar.Header {
	return &tar.Header{
		Typeflag: typ,
		Name:     name,
		Mode:     mode,
		Size:     size,
		ModTime:  epoch,
		// PAX, not GNU, for paths over 100 bytes: the standard every
		// runtime reads. Short paths stay plain USTAR.
		Format: tar.FormatPAX,
	}
}

// packLayer makes a layer of the tar entries write writes: the tar is
// hashed for its diff ID while it is compressed, and the compressed bytes
// are hashed for the digest, so pushing never compresses again.
func packLayer(write func(*tar.Writer) error) (*memLayer, error) {
	var buf bytes.Buffer
	digest := sha256.New()
	zw, err := gzip.NewWriterLevel(io.MultiWriter(&buf, digest), gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	diffID := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(zw, diffID))
	if err := write(tw); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return &memLayer{
		compressed: buf.Bytes(),
		digest:     v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", digest.Sum(nil))},
		diffID:     v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", diffID.Sum(nil))},
	}, nil
}

// unpackTree writes the entries of layer under root (a relative path)
// into dst, with their modes exactly, whatever the umask. Only
// directories and regular files are expected: the layers this package
// packs have nothing else.
func unpackTree(layer v1.Layer, root, dst string) error {
	rc, err := layer.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		rel, ok := strings.CutPrefix(path.Clean(h.Name), root)
		if !ok || rel != "" && !strings.HasPrefix(rel, "/") || strings.Contains(rel, "..") {
			return fmt.Errorf("unexpected entry %q", h.Name)
		}
		p := filepath.Join(dst, filepath.FromSlash(rel))
		mode := fs.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("unexpected entry %q of type %c", h.Name, h.Typeflag)
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
	}
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
