// Package catalogfs is the one definition of what a catalog of a
// repository holds: the files under its roots, as the pull request check
// validates them and as the published image's /configs holds them.
//
// A catalog with one root is that directory, as it always was: its files sit
// at the top of the catalog. A catalog of several roots keeps each root at
// its own path (catalog/bar/…, incubator/baz/…), so that no root can
// overlay another: a file one root adds never replaces or hides one of
// another root, and an .indexignore in one root governs only that root's
// tree. The same package in two roots is then two declarations of one
// package in one catalog, which validation reports, instead of one root's
// directory silently winning.
//
// The repository's own dot files at its top level (.catalogbot.yaml,
// .github/) are not catalog content when the root is the repository itself.
package catalogfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// New returns the catalog that the roots of tree make. Roots are slash
// separated and relative to the tree's top ("." for the whole tree); a root
// that is not a directory of tree is left out. It is an error when no root
// exists or when one root lies inside another.
func New(tree fs.FS, roots []string) (fs.FS, error) {
	var present []string
	for _, r := range roots {
		r = path.Clean(r)
		if r != "." && !fs.ValidPath(r) {
			return nil, fmt.Errorf("catalog root %q is not a path inside the repository", r)
		}
		if info, err := fs.Stat(tree, r); err == nil && info.IsDir() {
			present = append(present, r)
		}
	}
	slices.Sort(present)
	present = slices.Compact(present)
	if len(present) == 0 {
		return nil, fmt.Errorf("no catalog root (%s) exists", strings.Join(roots, ", "))
	}
	for i, a := range present {
		for _, b := range present[i+1:] {
			if a == "." || strings.HasPrefix(b, a+"/") {
				return nil, fmt.Errorf("catalog root %q lies inside catalog root %q; the roots of one catalog must be disjoint", b, a)
			}
		}
	}
	if len(present) == 1 {
		if present[0] == "." {
			return &hideDots{tree}, nil
		}
		return fs.Sub(tree, present[0])
	}
	return &union{tree: tree, roots: present}, nil
}

// Files lists the regular files of a catalog, slash separated and sorted:
// what the published /configs holds. A link reads as its target; one that
// does not lead to a regular file is not content.
func Files(catalog fs.FS) ([]string, error) {
	var out []string
	err := fs.WalkDir(catalog, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			info, err := fs.Stat(catalog, p)
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// hideDots is the whole tree less the dot entries at its top.
type hideDots struct{ fs.FS }

func hidden(name string) bool {
	first, _, _ := strings.Cut(name, "/")
	return strings.HasPrefix(first, ".") && first != "."
}

func (h *hideDots) Open(name string) (fs.File, error) {
	if hidden(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	f, err := h.FS.Open(name)
	if err != nil || name != "." {
		return f, err
	}
	return &filteredDir{File: f, keep: func(e fs.DirEntry) bool { return !strings.HasPrefix(e.Name(), ".") }}, nil
}

func (h *hideDots) ReadDir(name string) ([]fs.DirEntry, error) {
	if hidden(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	es, err := fs.ReadDir(h.FS, name)
	if err != nil || name != "." {
		return es, err
	}
	return slices.DeleteFunc(es, func(e fs.DirEntry) bool { return strings.HasPrefix(e.Name(), ".") }), nil
}

func (h *hideDots) ReadFile(name string) ([]byte, error) {
	if hidden(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrNotExist}
	}
	return fs.ReadFile(h.FS, name)
}

func (h *hideDots) Stat(name string) (fs.FileInfo, error) {
	if hidden(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return fs.Stat(h.FS, name)
}

// union is several disjoint roots of one tree, each at its own path, and the
// directories that lead to them.
type union struct {
	tree  fs.FS
	roots []string
}

// place says where name is: inside (or at) a root, on the way to one (an
// ancestor of a root), or neither.
func (u *union) place(name string) (inside, ancestor bool) {
	for _, r := range u.roots {
		if name == r || strings.HasPrefix(name, r+"/") {
			return true, false
		}
		if name == "." || strings.HasPrefix(r, name+"/") {
			ancestor = true
		}
	}
	return false, ancestor
}

// children are the entries of an ancestor directory that lead to a root.
func (u *union) children(dir string) map[string]bool {
	keep := map[string]bool{}
	for _, r := range u.roots {
		rest := r
		if dir != "." {
			var ok bool
			if rest, ok = strings.CutPrefix(r, dir+"/"); !ok {
				continue
			}
		}
		first, _, _ := strings.Cut(rest, "/")
		keep[first] = true
	}
	return keep
}

func (u *union) check(op, name string) (inside bool, err error) {
	if !fs.ValidPath(name) {
		return false, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	inside, ancestor := u.place(name)
	if !inside && !ancestor {
		return false, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return inside, nil
}

func (u *union) Open(name string) (fs.File, error) {
	inside, err := u.check("open", name)
	if err != nil {
		return nil, err
	}
	if inside {
		return u.tree.Open(name)
	}
	keep := u.children(name)
	return &filteredDir{File: &ancestorDir{name: name}, keep: func(e fs.DirEntry) bool { return keep[e.Name()] }, list: func() ([]fs.DirEntry, error) {
		return u.ReadDir(name)
	}}, nil
}

func (u *union) ReadDir(name string) ([]fs.DirEntry, error) {
	inside, err := u.check("readdir", name)
	if err != nil {
		return nil, err
	}
	if inside {
		return fs.ReadDir(u.tree, name)
	}
	es, err := fs.ReadDir(u.tree, name)
	if err != nil {
		return nil, err
	}
	keep := u.children(name)
	return slices.DeleteFunc(es, func(e fs.DirEntry) bool { return !keep[e.Name()] }), nil
}

func (u *union) ReadFile(name string) ([]byte, error) {
	inside, err := u.check("readfile", name)
	if err != nil {
		return nil, err
	}
	if !inside {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errors.New("is a directory")}
	}
	return fs.ReadFile(u.tree, name)
}

func (u *union) Stat(name string) (fs.FileInfo, error) {
	if _, err := u.check("stat", name); err != nil {
		return nil, err
	}
	return fs.Stat(u.tree, name)
}

// ancestorDir is an open directory on the way to a root; its entries come
// from filteredDir's list.
type ancestorDir struct{ name string }

func (d *ancestorDir) Stat() (fs.FileInfo, error) { return dirInfo(path.Base(d.name)), nil }
func (d *ancestorDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}
func (d *ancestorDir) Close() error { return nil }

// filteredDir is an open directory that lists only the entries keep
// accepts; list, when set, gives the entries, else the file's own.
type filteredDir struct {
	fs.File
	keep    func(fs.DirEntry) bool
	list    func() ([]fs.DirEntry, error)
	entries []fs.DirEntry
	read    bool
}

func (d *filteredDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if !d.read {
		d.read = true
		var es []fs.DirEntry
		var err error
		if d.list != nil {
			es, err = d.list()
		} else if rd, ok := d.File.(fs.ReadDirFile); ok {
			es, err = rd.ReadDir(-1)
		} else {
			err = errors.New("not a directory")
		}
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if d.keep(e) {
				d.entries = append(d.entries, e)
			}
		}
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n]
	d.entries = d.entries[n:]
	return out, nil
}

// dirInfo is the FileInfo of a directory on the way to a root.
type dirInfo string

func (d dirInfo) Name() string       { return string(d) }
func (d dirInfo) Size() int64        { return 0 }
func (d dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (d dirInfo) ModTime() time.Time { return time.Time{} }
func (d dirInfo) IsDir() bool        { return true }
func (d dirInfo) Sys() any           { return nil }
