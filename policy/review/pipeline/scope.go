package pipeline

import (
	"io/fs"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks/change"
)

// A scope is the part of one catalog root that a change can affect. The
// layout of a catalog repository puts each package in the directory of its
// name directly below a root (catalog/etcd/ holds package etcd), so the
// scope is the package directories the change touches, plus the
// directories named after every package those hold on either side, and
// every file directly in the root. A change to one package of a large
// catalog then validates that package, not the whole catalog, and never
// reads the rest.
//
// For a catalog laid out so, validating the scope gives the same findings
// for it as validating the whole: opm's rules relate blobs only through
// package names (a package defined twice, the channels and bundles of a
// package, replaces and skips within it), and the scope holds every
// directory where a blob of its packages is: the directories of their
// names, and those of the base that hold them under another name (the
// package index, see packageIndex). What is left out is untouched on both
// sides of the change and shares no package with it, so its problems are
// pre-existing by definition and are not re-reported: the verdict is that
// of the whole head catalog. A blob outside the directory of its package's
// name breaks the layout, which the fbc check reports (PK1).
type scope struct {
	// all means the whole root: a change to a file directly in the root,
	// such as .indexignore, whose patterns apply everywhere.
	all bool
	// dirs are the package directories in scope, by name.
	dirs map[string]bool
	// touched counts the directories the change touched itself.
	touched int
	// total counts the directories of the root.
	total int
	// holders are, by package name, the directories of the base whose
	// blobs mention the package (see packageIndex); nil when unknown.
	holders map[string][]string
}

// touchedDirs returns the directories directly below root that the change
// touches, both sides of renames included, and whether it touches a file
// directly in root.
func touchedDirs(c *change.Change, root string) (map[string]bool, bool) {
	dirs := map[string]bool{}
	rootFile := false
	if c == nil {
		return dirs, true
	}
	prefix := root + "/"
	if root == "." {
		prefix = ""
	}
	for _, f := range c.Files {
		for _, p := range []string{f.Path, f.PreviousPath} {
			if p == "" || !strings.HasPrefix(p, prefix) {
				continue
			}
			if root == "." && strings.HasPrefix(p, ".") {
				// The repository's own dot files are not catalog
				// content (catalogfs).
				continue
			}
			dir, _, nested := strings.Cut(strings.TrimPrefix(p, prefix), "/")
			if !nested {
				rootFile = true
				continue
			}
			dirs[dir] = true
		}
	}
	return dirs, rootFile
}

// packageDirs lists the directories directly in root.
func packageDirs(fsys fs.FS, root string) (map[string]bool, error) {
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, err
	}
	dirs := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() {
			dirs[e.Name()] = true
		}
	}
	return dirs, nil
}

// grow adds to s the directory of every package name of the scope and
// every directory of the base that holds one of those packages, and
// repeats with the names those bring in, until nothing more joins. names
// validates the current scope and returns its package names; grow always
// ends with a call for the final scope.
func (s *scope) grow(existing map[string]bool, names func(*scope) ([]string, error)) error {
	for {
		ns, err := names(s)
		if err != nil || s.all {
			return err
		}
		joined := false
		for _, n := range ns {
			if existing[n] && !s.dirs[n] {
				s.dirs[n] = true
				joined = true
			}
			for _, d := range s.holders[n] {
				if !s.dirs[d] {
					s.dirs[d] = true
					joined = true
				}
			}
		}
		if !joined {
			return nil
		}
	}
}

// scopedFS shows the directories of a scope and every file directly in the
// root, hiding the other directories, so that the validator loads only the
// scope. Paths are relative to the catalog root.
type scopedFS struct {
	fsys fs.FS
	// shown are the root's entries in view: the scope's directories and
	// every entry that is not a directory.
	shown map[string]bool
}

func newScopedFS(fsys fs.FS, dirs map[string]bool) (scopedFS, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return scopedFS{}, err
	}
	shown := make(map[string]bool, len(dirs))
	for _, e := range entries {
		if !e.IsDir() || dirs[e.Name()] {
			shown[e.Name()] = true
		}
	}
	return scopedFS{fsys: fsys, shown: shown}, nil
}

func (s scopedFS) visible(name string) bool {
	first, _, _ := strings.Cut(name, "/")
	return name == "." || s.shown[first]
}

func (s scopedFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if !s.visible(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return s.fsys.Open(name)
}

func (s scopedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) || !s.visible(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	entries, err := fs.ReadDir(s.fsys, name)
	if name != "." {
		return entries, err
	}
	return slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return !s.shown[e.Name()] }), err
}
