package build

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// baseFS is the file tree of an image's layers as a container runtime
// would see it, indexed without unpacking: the header of every path the
// merged tree holds, with whiteouts and opaque whiteouts applied. Only the
// files asked for are then written out (extract), so finding opm in a
// base does not write the whole base to disk.
//
// Each layer is read once from its source: its uncompressed tar is kept in
// a private file while it is indexed, and extract reads from there.
type baseFS struct {
	dir     string // the layer copies
	layers  []string
	entries map[string]baseEntry // by clean absolute path
}

type baseEntry struct {
	layer int
	hdr   *tar.Header
}

// maxLinks bounds symbolic link resolution, as the kernel's ELOOP does.
const maxLinks = 40

// readBaseFS indexes img's layers, keeping their copies in dir.
func readBaseFS(img v1.Image, dir string) (*baseFS, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	fsys := &baseFS{dir: dir, entries: map[string]baseEntry{}}
	for i, l := range layers {
		if err := fsys.addLayer(i, l); err != nil {
			d, _ := l.Digest()
			return nil, fmt.Errorf("layer %d (%s): %w", i+1, d, err)
		}
	}
	return fsys, nil
}

func (fsys *baseFS) addLayer(i int, l v1.Layer) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	name := filepath.Join(fsys.dir, fmt.Sprintf("layer-%d.tar", i))
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer f.Close()
	fsys.layers = append(fsys.layers, name)

	// Paths this layer wrote: an opaque whiteout hides what lower layers
	// have in its directory, not what its own layer puts there.
	mine := map[string]bool{}
	var opaque []string
	tr := tar.NewReader(io.TeeReader(rc, f))
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
		dir = path.Clean(dir)
		switch {
		case base == ".wh..wh..opq":
			opaque = append(opaque, dir)
			continue
		case strings.HasPrefix(base, ".wh."):
			fsys.remove(path.Join(dir, strings.TrimPrefix(base, ".wh.")))
			continue
		}
		// A non-directory replaces a whole subtree; a directory over a
		// directory merges with it.
		if old, ok := fsys.entries[p]; ok && !(old.hdr.Typeflag == tar.TypeDir && h.Typeflag == tar.TypeDir) {
			fsys.remove(p)
		}
		fsys.entries[p] = baseEntry{layer: i, hdr: h}
		mine[p] = true
		// Layers need not list the directories they write into.
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := fsys.entries[d]; ok {
				break
			}
			fsys.entries[d] = baseEntry{layer: i, hdr: &tar.Header{Typeflag: tar.TypeDir, Name: d}}
			mine[d] = true
		}
	}
	for _, dir := range opaque {
		prefix := strings.TrimSuffix(dir, "/") + "/"
		for p := range fsys.entries {
			if strings.HasPrefix(p, prefix) && !mine[p] {
				delete(fsys.entries, p)
			}
		}
	}
	// Drain what the tar reader left (padding), so the copy is whole.
	if _, err := io.Copy(io.Discard, io.TeeReader(rc, f)); err != nil {
		return err
	}
	return f.Close()
}

// remove deletes p and everything under it.
func (fsys *baseFS) remove(p string) {
	delete(fsys.entries, p)
	prefix := strings.TrimSuffix(p, "/") + "/"
	for q := range fsys.entries {
		if strings.HasPrefix(q, prefix) {
			delete(fsys.entries, q)
		}
	}
}

// resolve follows the symbolic links of p inside the image, as a process
// chrooted into it would: absolute targets start at the image's root and
// ".." stops there. It returns the path of the regular file p names.
func (fsys *baseFS) resolve(p string) (string, error) {
	rest := strings.Split(p, "/")
	cur := "/"
	links := 0
	for len(rest) > 0 {
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
		e, ok := fsys.entries[next]
		if !ok {
			return "", fmt.Errorf("%s: %s does not exist", p, next)
		}
		switch e.hdr.Typeflag {
		case tar.TypeSymlink:
			if links++; links > maxLinks {
				return "", fmt.Errorf("%s: too many levels of symbolic links", p)
			}
			if path.IsAbs(e.hdr.Linkname) {
				cur = "/"
			}
			rest = append(strings.Split(e.hdr.Linkname, "/"), rest...)
			continue
		case tar.TypeLink:
			// A hard link is the file it names, which the same or a
			// lower layer holds.
			if len(rest) > 0 {
				return "", fmt.Errorf("%s: %s is not a directory", p, next)
			}
			return fsys.resolve("/" + e.hdr.Linkname)
		case tar.TypeDir:
		default:
			if len(rest) > 0 {
				return "", fmt.Errorf("%s: %s is not a directory", p, next)
			}
		}
		cur = next
	}
	e, ok := fsys.entries[cur]
	// tar.Reader reports the old TypeRegA as TypeReg.
	if !ok || e.hdr.Typeflag != tar.TypeReg {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	return cur, nil
}

// extract writes the regular file at the resolved path p to dst, executable
// by its owner. A layer that holds p more than once means its last copy,
// as it does for the index.
func (fsys *baseFS) extract(p, dst string) error {
	e, ok := fsys.entries[p]
	if !ok {
		return fmt.Errorf("%s does not exist", p)
	}
	f, err := os.Open(fsys.layers[e.layer])
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	found := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if path.Clean("/"+h.Name) != p || h.Typeflag != tar.TypeReg {
			continue
		}
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o700)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		found = true
	}
	if !found {
		return fmt.Errorf("%s: not found again in layer %d", p, e.layer+1)
	}
	return nil
}
