//go:build unix

package gitobj

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/go-git/go-billy/v5"
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
// directory of the operating system's file system: the file that path
// names is the very file fsys has under name, the same device and inode
// (billy's helpers wrap a file's description, not what the system says
// of it).
func osPath(fsys billy.Filesystem, name string) (string, bool) {
	fi, err := fsys.Stat(name)
	if err != nil {
		return "", false
	}
	p := filepath.Join(fsys.Root(), name)
	osfi, err := os.Stat(p)
	if err != nil {
		return "", false
	}
	a, ok1 := fi.Sys().(*syscall.Stat_t)
	b, ok2 := osfi.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 || a.Dev != b.Dev || a.Ino != b.Ino {
		return "", false
	}
	return p, true
}
