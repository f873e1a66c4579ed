package pipeline

import (
	"cmp"
	"errors"
	"io/fs"
	"path"
	"slices"
)

// ReadFile is a file a check of the change reads, with its size as the
// tree gives it.
type ReadFile struct {
	// Side is "base" or "head".
	Side string
	Path string
	Size int64
}

// Reads is what a check of the change will read of its two trees, known
// before any of it is read: a front end reserves memory for it (a check
// holds a multiple of the catalog bytes it reads) before the checks run.
type Reads struct {
	// Bytes is the sum of the files' sizes, at most limits.catalogBytes
	// (the check reads no more).
	Bytes int64
	// Files are the files, largest first.
	Files []ReadFile
}

// Reads estimates what the checks of in read: on both sides, every file of
// the package directories the change touches under each catalog root and
// every file directly in the root (the whole root when the change touches
// a file there), as the scope of the fbc check starts out. A file larger
// than limits.fileBytes is left out: it is a finding, never read. The
// sizes come from the trees' entries, so no file is read to count it.
// Packages the scope grows by (a package named in a touched directory and
// held elsewhere) are not counted: they are found only by reading.
func (in *Input) Reads() (Reads, error) {
	var r Reads
	seen := map[string]bool{}
	add := func(side string, fsys fs.FS, dir string) error {
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			key := side + "\x00" + p
			if d.IsDir() || seen[key] {
				return nil
			}
			seen[key] = true
			info, err := d.Info()
			if err != nil {
				return err
			}
			if !info.Mode().IsRegular() {
				return nil
			}
			if max := in.Policy.Limits.FileBytes; max > 0 && info.Size() > max {
				return nil
			}
			r.Files = append(r.Files, ReadFile{Side: side, Path: p, Size: info.Size()})
			r.Bytes += info.Size()
			return nil
		})
		if errors.Is(err, fs.ErrNotExist) {
			// Absent on this side: added or deleted by the change.
			return nil
		}
		return err
	}
	for _, side := range []struct {
		name string
		fsys fs.FS
	}{{"base", in.indexBase()}, {"head", unlimited(in.Head)}} {
		if side.fsys == nil {
			continue
		}
		for _, t := range in.targets() {
			for _, root := range t.Roots {
				dirs, rootFile := touchedDirs(in.Change, root)
				if rootFile {
					if err := add(side.name, side.fsys, root); err != nil {
						return Reads{}, err
					}
					continue
				}
				entries, err := fs.ReadDir(side.fsys, root)
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					return Reads{}, err
				}
				for _, e := range entries {
					if !e.IsDir() || dirs[e.Name()] {
						if err := add(side.name, side.fsys, path.Join(root, e.Name())); err != nil {
							return Reads{}, err
						}
					}
				}
			}
		}
	}
	if max := in.Policy.Limits.CatalogBytes; max > 0 {
		r.Bytes = min(r.Bytes, max)
	}
	slices.SortStableFunc(r.Files, func(a, b ReadFile) int { return cmp.Compare(b.Size, a.Size) })
	return r, nil
}

// unlimited is fsys as given, before bind put it within the limits.
func unlimited(fsys fs.FS) fs.FS {
	if l, ok := fsys.(limitedFS); ok {
		return l.fsys
	}
	return fsys
}
