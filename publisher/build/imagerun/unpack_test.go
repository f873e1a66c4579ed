package imagerun_test

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// unpack writes the filesystem of img into root as a container runtime
// does: layers in order, each entry replacing what was at its path (a
// directory over a directory merges), ".wh.NAME" deleting NAME and
// ".wh..wh..opq" emptying its directory of what lower layers put there.
// Links keep their targets as written, which are right inside a chroot.
// As root it also gives every entry its owner, as a runtime does; the
// image's files are then what its user can read.
//
// It is written from the OCI image spec's layer rules, apart from the
// build code it checks.
func unpack(t testing.TB, img v1.Image, root string) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	chown := os.Geteuid() == 0
	for i, l := range layers {
		if err := unpackLayer(l, root, chown); err != nil {
			t.Fatalf("unpack layer %d: %v", i+1, err)
		}
	}
}

func unpackLayer(l v1.Layer, root string, chown bool) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	mine := map[string]bool{}
	var opaque []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		p := path.Clean("/" + h.Name)
		if p == "/" {
			continue
		}
		dir, base := path.Split(p)
		parent, err := inRoot(root, dir)
		if err != nil {
			return err
		}
		if base == ".wh..wh..opq" {
			opaque = append(opaque, parent)
			continue
		}
		if name, ok := strings.CutPrefix(base, ".wh."); ok {
			if err := os.RemoveAll(filepath.Join(parent, name)); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return err
		}
		target := filepath.Join(parent, base)
		mine[target] = true
		if fi, err := os.Lstat(target); err == nil && !(fi.IsDir() && h.Typeflag == tar.TypeDir) {
			if err := os.RemoveAll(target); err != nil {
				return err
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(target, 0o700); err != nil && !os.IsExist(err) {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
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
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
		case tar.TypeLink:
			src, err := inRoot(root, h.Linkname)
			if err != nil {
				return err
			}
			if err := os.Link(src, target); err != nil {
				return err
			}
		default:
			continue // devices and fifos: nothing here needs them
		}
		if chown {
			if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
				return err
			}
		}
		if h.Typeflag != tar.TypeSymlink {
			if err := os.Chmod(target, fs.FileMode(h.Mode).Perm()|modeBits(h.Mode)); err != nil {
				return err
			}
		}
	}
	for _, dir := range opaque {
		entries, err := os.ReadDir(dir)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		for _, e := range entries {
			if p := filepath.Join(dir, e.Name()); !mine[p] {
				if err := os.RemoveAll(p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// modeBits are the sticky, setuid and setgid bits of a tar mode.
func modeBits(mode int64) fs.FileMode {
	var m fs.FileMode
	if mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	if mode&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if mode&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	return m
}

// inRoot is the host path of the image path p, its links followed inside
// root as a chrooted process would follow them.
func inRoot(root, p string) (string, error) {
	rest := strings.Split(p, "/")
	cur := "/"
	for links := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		target, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			cur = next // not a link, or not there yet
			continue
		}
		if links++; links > 40 {
			return "", &fs.PathError{Op: "resolve", Path: p, Err: fs.ErrInvalid}
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return filepath.Join(root, cur), nil
}

// layerBuilder writes the tar of a test layer.
type layerBuilder struct {
	buf bytes.Buffer
	tw  *tar.Writer
}

func (b *layerBuilder) add(h *tar.Header, data []byte) {
	if b.tw == nil {
		b.tw = tar.NewWriter(&b.buf)
	}
	if err := b.tw.WriteHeader(h); err != nil {
		panic(err)
	}
	if _, err := b.tw.Write(data); err != nil {
		panic(err)
	}
}

func (b *layerBuilder) dir(name string, mode int64) {
	b.add(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode}, nil)
}

func (b *layerBuilder) file(name string, mode int64, data []byte) {
	b.add(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data))}, data)
}

// hostFile adds the host's file p at the same path, and every link on the
// way to it as a link.
func (b *layerBuilder) hostFile(t testing.TB, p string) {
	t.Helper()
	for range 40 {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p, "/")
		if fi.Mode()&fs.ModeSymlink == 0 {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b.file(name, int64(fi.Mode().Perm()), data)
			return
		}
		target, err := os.Readlink(p)
		if err != nil {
			t.Fatal(err)
		}
		b.add(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}, nil)
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(p), target)
		}
		p = target
	}
	t.Fatalf("%s: too many links", p)
}

func (b *layerBuilder) layer(t testing.TB) v1.Layer {
	t.Helper()
	if b.tw == nil {
		b.tw = tar.NewWriter(&b.buf)
	}
	if err := b.tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := b.buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}
