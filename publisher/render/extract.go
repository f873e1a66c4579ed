package render

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// OCI layer whiteouts: ".wh.x" deletes x from the layers below; a
// ".wh..wh..opq" entry hides everything the layers below put in its
// directory.
const (
	whiteoutPrefix = ".wh."
	opaqueWhiteout = ".wh..wh..opq"
)

// maxLinkHops bounds symlink chains, as the kernel's ELOOP limit does.
const maxLinkHops = 40

// extractTree applies the layers of img, in order, to the directory root,
// which it creates, keeping only what lies at or below the image path sub
// ("" for the whole filesystem): a catalog image's /configs, without writing
// the rest of the image anywhere. Layers are streamed, never stored. It
// reports whether sub is a directory in the resulting filesystem.
//
// Symbolic links are never created on disk, so nothing read from root can
// lead outside it. A link to a regular file inside the tree is replaced by a
// copy of that file, which is what a reader following it would see; other
// links (to directories, or leaving the tree) are dropped. Device nodes and
// FIFOs are dropped too.
//
// maxBytes, when above 0, bounds the file content written, copies of
// links included: past it the extraction stops with a *TooLargeError.
func extractTree(ctx context.Context, img v1.Image, sub, root string, maxBytes int64) (bool, error) {
	sub = cleanImagePath(sub)
	layers, err := img.Layers()
	if err != nil {
		return false, err
	}
	t := &tree{sub: sub, root: root, links: map[string]string{}, max: maxBytes}
	if sub == "" {
		// The whole filesystem always exists, even if no layer has an entry.
		if err := os.Mkdir(t.root, 0o700); err != nil {
			return false, err
		}
	}
	for i, layer := range layers {
		if err := t.applyLayer(ctx, layer); err != nil {
			return false, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	if err := t.resolveLinks(); err != nil {
		return false, err
	}
	info, err := os.Stat(t.root)
	if err != nil || !info.IsDir() {
		return false, nil
	}
	return true, nil
}

// tree is the state of an extraction. Paths named rel are relative to the
// subtree root ("" is the root itself); image paths are relative to the
// image's root.
type tree struct {
	sub   string
	root  string
	links map[string]string // rel path of a symlink -> its target's image path

	// What the layer being applied has written: opaque whiteouts remove
	// only what lower layers wrote.
	written  map[string]bool
	ancestor map[string]bool // directories above something written

	// max bounds the bytes of file content written (0: no bound); used
	// counts them, rewritten and copied files included.
	max, used int64
}

// TooLargeError is an image whose content is larger than the renderer may
// write out (Options.MaxBytes).
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the image holds more than %d bytes of content, more than a check unpacks (limits.catalogBytes)", e.Limit)
}

// copy copies r to w within the tree's bound.
func (t *tree) copy(w io.Writer, r io.Reader) error {
	if t.max <= 0 {
		_, err := io.Copy(w, r)
		return err
	}
	n, err := io.Copy(w, io.LimitReader(r, t.max-t.used+1))
	t.used += n
	if err != nil {
		return err
	}
	if t.used > t.max {
		return &TooLargeError{Limit: t.max}
	}
	return nil
}

func cleanImagePath(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

// locate says where an image path falls: inside the subtree (with its rel
// path), strictly above it, or elsewhere.
func (t *tree) locate(p string) (rel string, inside, above bool) {
	switch {
	case t.sub == "":
		return p, true, false
	case p == t.sub:
		return "", true, false
	case strings.HasPrefix(p, t.sub+"/"):
		return p[len(t.sub)+1:], true, false
	case p == "" || strings.HasPrefix(t.sub, p+"/"):
		return "", false, true
	}
	return "", false, false
}

func (t *tree) local(rel string) string {
	if rel == "" {
		return t.root
	}
	return filepath.Join(t.root, filepath.FromSlash(rel))
}

func (t *tree) applyLayer(ctx context.Context, layer v1.Layer) error {
	rc, err := layer.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	t.written = map[string]bool{}
	t.ancestor = map[string]bool{}
	tr := tar.NewReader(rc)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read tar: %w", err)
		}
		if err := t.apply(hdr, tr); err != nil {
			return err
		}
	}
	// Read to the end so the layer's digest is checked.
	_, err = io.Copy(io.Discard, rc)
	return err
}

func (t *tree) apply(hdr *tar.Header, r io.Reader) error {
	name := cleanImagePath(hdr.Name)
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	switch {
	case base == opaqueWhiteout:
		return t.opaque(dir)
	case base == whiteoutPrefix:
		return nil // names nothing; never remove the directory itself
	case strings.HasPrefix(base, whiteoutPrefix):
		return t.remove(path.Join(dir, base[len(whiteoutPrefix):]))
	}
	rel, inside, above := t.locate(name)
	if above {
		// A directory above the subtree changes nothing in it; anything
		// else replaces the directory, and the subtree with it.
		if hdr.Typeflag == tar.TypeDir {
			return nil
		}
		return t.removeRel("")
	}
	if !inside {
		return nil
	}
	t.markWritten(rel)
	switch hdr.Typeflag {
	case tar.TypeDir:
		return t.mkdir(rel)
	case tar.TypeReg: // tar.Reader reports the old TypeRegA as TypeReg
		return t.writeFile(rel, r)
	case tar.TypeSymlink:
		if err := t.clear(rel); err != nil {
			return err
		}
		target := hdr.Linkname
		if !strings.HasPrefix(target, "/") {
			target = path.Join(path.Dir(name), target)
		}
		t.links[rel] = cleanImagePath(target)
		return nil
	case tar.TypeLink:
		return t.hardlink(rel, cleanImagePath(hdr.Linkname))
	default:
		// Devices and FIFOs are not catalog content, but they still
		// replace whatever lower layers had at that path.
		return t.clear(rel)
	}
}

func (t *tree) markWritten(rel string) {
	t.written[rel] = true
	for rel != "" {
		rel = parentRel(rel)
		t.ancestor[rel] = true
	}
}

func parentRel(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// ensureParents makes the directories above rel, replacing files that lower
// layers left where a directory is now needed.
func (t *tree) ensureParents(rel string) error {
	var parents []string
	for p := rel; p != ""; {
		p = parentRel(p)
		parents = append(parents, p)
	}
	for i := len(parents) - 1; i >= 0; i-- {
		if err := t.mkdirOne(parents[i]); err != nil {
			return err
		}
	}
	return nil
}

func (t *tree) mkdir(rel string) error {
	if err := t.ensureParents(rel); err != nil {
		return err
	}
	return t.mkdirOne(rel)
}

// mkdirOne makes the directory rel, whose parent exists.
func (t *tree) mkdirOne(rel string) error {
	delete(t.links, rel)
	p := t.local(rel)
	info, err := os.Lstat(p)
	if err == nil && info.IsDir() {
		return nil
	}
	if err == nil {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return os.Mkdir(p, 0o700)
}

// clear removes whatever is at rel, ready for a new entry, and makes sure
// its parent directories exist.
func (t *tree) clear(rel string) error {
	if err := t.ensureParents(rel); err != nil {
		return err
	}
	t.dropLinks(rel)
	if err := os.RemoveAll(t.local(rel)); err != nil {
		return err
	}
	return nil
}

func (t *tree) writeFile(rel string, r io.Reader) error {
	if err := t.clear(rel); err != nil {
		return err
	}
	f, err := os.OpenFile(t.local(rel), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if err := t.copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hardlink copies the file a hard link names, when that file is in the
// tree; a link to a symlink becomes the same symlink.
func (t *tree) hardlink(rel, target string) error {
	if err := t.clear(rel); err != nil {
		return err
	}
	trel, inside, _ := t.locate(target)
	if !inside {
		return nil
	}
	if dest, ok := t.links[trel]; ok {
		t.links[rel] = dest
		return nil
	}
	return t.copyRegular(t.local(trel), t.local(rel))
}

// remove applies a whiteout for the image path p.
func (t *tree) remove(p string) error {
	rel, inside, above := t.locate(p)
	if !inside && !above {
		return nil
	}
	return t.removeRel(rel)
}

func (t *tree) removeRel(rel string) error {
	t.dropLinks(rel)
	return os.RemoveAll(t.local(rel))
}

// dropLinks forgets the symlinks at or below rel.
func (t *tree) dropLinks(rel string) {
	for l := range t.links {
		if rel == "" || l == rel || strings.HasPrefix(l, rel+"/") {
			delete(t.links, l)
		}
	}
}

// opaque applies an opaque whiteout for the image directory dir: whatever
// lower layers put below it goes, what this layer wrote stays.
func (t *tree) opaque(dir string) error {
	rel, inside, above := t.locate(cleanImagePath(dir))
	if !inside && !above {
		return nil
	}
	for l := range t.links {
		if (rel == "" || strings.HasPrefix(l, rel+"/")) && !t.written[l] {
			delete(t.links, l)
		}
	}
	return t.removeLower(rel)
}

func (t *tree) removeLower(rel string) error {
	entries, err := os.ReadDir(t.local(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		child := e.Name()
		if rel != "" {
			child = rel + "/" + child
		}
		switch {
		case e.IsDir() && (t.written[child] || t.ancestor[child]):
			if err := t.removeLower(child); err != nil {
				return err
			}
		case t.written[child]:
		default:
			if err := os.RemoveAll(t.local(child)); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolveLinks replaces each symlink whose target is a regular file inside
// the tree with a copy of that file.
func (t *tree) resolveLinks() error {
	for rel, target := range t.links {
		for range maxLinkHops {
			trel, inside, _ := t.locate(target)
			if !inside {
				break
			}
			next, isLink := t.links[trel]
			if !isLink {
				if err := t.ensureParents(rel); err != nil {
					return err
				}
				if err := t.copyRegular(t.local(trel), t.local(rel)); err != nil {
					return err
				}
				break
			}
			target = next
		}
	}
	return nil
}

// copyRegular copies src to dst if src is a regular file, and does nothing
// otherwise.
func (t *tree) copyRegular(src, dst string) error {
	info, err := os.Lstat(src)
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if err := t.copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
