//go:build unix

package gitobj

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
)

// mapIndex maps a pack index into memory read only, as git does, rather
// than reading it: a check looks up a few thousand of its hundreds of
// thousands of ids, so only those pages are read, and a fresh process
// (the Action's, the command line's) does not copy 5 MiB before its first
// lookup. git writes an index whole under a temporary name and renames
// it, so the mapped file never changes. ok is false where the file system
// is not the operating system's or the mapping fails: the caller reads
// the file instead.
func mapIndex(fsys billy.Filesystem, name string) (b []byte, release func(), ok bool) {
	p, isOS := osPath(fsys, name)
	if !isOS {
		return nil, nil, false
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= 0 || fi.Size() != int64(int(fi.Size())) {
		return nil, nil, false
	}
	b, err = syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	return b, func() { syscall.Munmap(b) }, true
}

// osPath is the operating system's path of name in fsys, when fsys is a
// directory of the operating system's file system.
func osPath(fsys billy.Filesystem, name string) (string, bool) {
	if b, ok := fsys.(*osfs.BoundOS); ok {
		return filepath.Join(b.Root(), name), true
	}
	// osfs.New's file system: a chroot of the whole operating system's,
	// through the helpers that fill in what it lacks.
	var fs billy.Basic = fsys
	for range 4 {
		u, ok := fs.(interface{ Underlying() billy.Basic })
		if !ok {
			return "", false
		}
		if fs = u.Underlying(); fs == nil {
			return "", false
		}
		if _, isOS := fs.(*osfs.ChrootOS); isOS {
			return filepath.Join(fsys.Root(), name), true
		}
	}
	return "", false
}
