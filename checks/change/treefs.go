package change

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/catalogbot/catalogbot/checks/change/gitobj"
)

// TreeFS exposes the tree of the commit that rev names as a read-only file
// system. It implements fs.FS, fs.ReadDirFS, fs.ReadFileFS, fs.StatFS and
// fs.ReadLinkFS, and is safe for concurrent use.
//
// Every entry has the commit's committer time as its modification time.
// Regular files are 0444 (0555 when executable), directories 0555. A
// submodule reads as an empty directory, as in a checkout that did not
// initialise it. Symbolic links are followed by Open, Stat and ReadFile as
// long as they resolve inside the tree: a link that leaves the tree, or loops,
// does not exist as far as this file system is concerned, so reading a tree
// can never reach the host's files. Entries whose names cannot be fs.FS path
// elements (".", ".." or names with a slash, which only a crafted tree
// holds) are left out; a tree with an empty name is malformed, and reading
// it fails with go-git's object.ErrMalformedTree.
func TreeFS(repo *git.Repository, rev string) (fs.FS, error) {
	c, err := commit(repo, rev)
	if err != nil {
		return nil, err
	}
	return commitFS(repo, c)
}

func commitFS(repo *git.Repository, c *object.Commit) (fs.FS, error) {
	t := &treeFS{
		s:       repo.Storer,
		objects: objectStore(repo),
		modTime: c.Committer.When,
		dirs:    make(map[string]*dirNode),
		commit:  c.Hash.String(),
	}
	if s, ok := repo.Storer.(*verifiedStorage); ok {
		t.promisor, t.repoDir = s.promisor, s.dir
	}
	root, err := t.loadDir(c.TreeHash)
	if err != nil {
		return nil, err
	}
	t.dirs["."] = root
	return t, nil
}

// maxLinkHops bounds symbolic link resolution, as the kernel's ELOOP does.
const maxLinkHops = 40

type treeFS struct {
	// mu guards the object storer, which go-git does not make safe for
	// concurrent use, and the cache of directories read so far.
	mu sync.Mutex
	s  storer.EncodedObjectStorer
	// objects is the verified reader of a repository from Open, nil for
	// any other: then blobs are read through go-git and verified here.
	objects *gitobj.Store
	modTime time.Time
	dirs    map[string]*dirNode
	misread atomic.Pointer[fs.PathError]
	// commit, promisor and repoDir go into the *ObjectError of an object
	// that cannot be read.
	commit, promisor, repoDir string
}

// dirNode is one directory of the tree, its entries sorted by name as
// fs.ReadDir promises (git orders directories as if their names ended in a
// slash, which is not the same order).
type dirNode struct {
	entries []object.TreeEntry
	index   map[string]int
}

var (
	_ fs.ReadDirFS   = (*treeFS)(nil)
	_ fs.ReadFileFS  = (*treeFS)(nil)
	_ fs.StatFS      = (*treeFS)(nil)
	_ fs.ReadLinkFS  = (*treeFS)(nil)
	_ fs.ReadDirFile = (*dirFile)(nil)
)

func (t *treeFS) loadDir(h plumbing.Hash) (*dirNode, error) {
	entries, err := t.treeEntries(h)
	if err != nil {
		return nil, err
	}
	n := &dirNode{index: make(map[string]int, len(entries))}
	for _, e := range entries {
		if !validElem(e.Name) {
			continue
		}
		if _, dup := n.index[e.Name]; dup {
			continue
		}
		n.index[e.Name] = 0
		n.entries = append(n.entries, e)
	}
	slices.SortFunc(n.entries, func(a, b object.TreeEntry) int { return strings.Compare(a.Name, b.Name) })
	for i, e := range n.entries {
		n.index[e.Name] = i
	}
	return n, nil
}

// treeEntries reads the tree h. From a repository of Open it decodes the
// verified object itself: a check of a large repository walks tens of
// thousands of trees (OWNERS may sit anywhere), and go-git's decoder,
// which builds a lookup map per tree, costs more than reading them.
func (t *treeFS) treeEntries(h plumbing.Hash) ([]object.TreeEntry, error) {
	if t.objects == nil {
		tree, err := object.GetTree(t.s, h)
		if err != nil {
			return nil, t.objectError(h, err)
		}
		return tree.Entries, nil
	}
	typ, b, err := t.objects.Read(h)
	if err != nil {
		return nil, t.objectError(h, err)
	}
	if typ != plumbing.TreeObject {
		return nil, plumbing.ErrObjectNotFound
	}
	return parseTree(h, b)
}

// parseTree decodes a tree object: entries of "<octal mode> <name>\x00"
// and a 20-byte id.
func parseTree(h plumbing.Hash, b []byte) ([]object.TreeEntry, error) {
	var out []object.TreeEntry
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp <= 0 || nul < sp || len(b) < nul+1+20 {
			return nil, fmt.Errorf("git tree %s: malformed entry", h)
		}
		var mode uint32
		for _, c := range b[:sp] {
			if c < '0' || c > '7' || mode > 1<<28 {
				return nil, fmt.Errorf("git tree %s: malformed mode %q", h, b[:sp])
			}
			mode = mode<<3 | uint32(c-'0')
		}
		e := object.TreeEntry{Name: string(b[sp+1 : nul]), Mode: filemode.FileMode(mode)}
		copy(e.Hash[:], b[nul+1:nul+21])
		out = append(out, e)
		b = b[nul+21:]
	}
	return out, nil
}

func validElem(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.Contains(name, "/")
}

// node is a resolved path: its entry in the parent directory (a synthetic
// one for the root) and the clean path it was found at.
type node struct {
	path  string
	entry object.TreeEntry
}

// lookup finds name without following a symbolic link in its last element;
// links in the directories leading to it are followed. The caller holds mu.
func (t *treeFS) lookup(name string, hops *int) (node, error) {
	if name == "." {
		return node{path: ".", entry: object.TreeEntry{Name: ".", Mode: filemode.Dir}}, nil
	}
	dir, base := path.Split(name)
	dirPath := "."
	if dir != "" {
		d, err := t.resolve(strings.TrimSuffix(dir, "/"), hops)
		if err != nil {
			return node{}, err
		}
		if d.entry.Mode != filemode.Dir && d.entry.Mode != filemode.Submodule {
			return node{}, fs.ErrNotExist
		}
		dirPath = d.path
	}
	n, err := t.dir(dirPath)
	if err != nil {
		return node{}, err
	}
	i, ok := n.index[base]
	if !ok {
		return node{}, fs.ErrNotExist
	}
	return node{path: join(dirPath, base), entry: n.entries[i]}, nil
}

// resolve finds name and follows symbolic links all the way, within the
// tree. The caller holds mu.
func (t *treeFS) resolve(name string, hops *int) (node, error) {
	n, err := t.lookup(name, hops)
	if err != nil {
		return node{}, err
	}
	for n.entry.Mode == filemode.Symlink {
		if *hops++; *hops > maxLinkHops {
			return node{}, fs.ErrNotExist
		}
		target, err := t.blob(n.entry.Hash)
		if err != nil {
			return node{}, err
		}
		next, ok := linkTarget(path.Dir(n.path), string(target))
		if !ok {
			return node{}, fs.ErrNotExist
		}
		if n, err = t.lookup(next, hops); err != nil {
			return node{}, err
		}
	}
	return n, nil
}

// linkTarget joins a link's target to the directory holding the link and
// reports whether the result stays inside the tree.
func linkTarget(dir, target string) (string, bool) {
	if target == "" || strings.HasPrefix(target, "/") {
		return "", false
	}
	p := path.Join(dir, target)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

func join(dir, base string) string {
	if dir == "." {
		return base
	}
	return dir + "/" + base
}

// dir returns the directory at the clean, link-free path p. The caller
// holds mu.
func (t *treeFS) dir(p string) (*dirNode, error) {
	if n, ok := t.dirs[p]; ok {
		return n, nil
	}
	parent, err := t.dir(path.Dir(p))
	if err != nil {
		return nil, err
	}
	i, ok := parent.index[path.Base(p)]
	if !ok {
		return nil, fs.ErrNotExist
	}
	var n *dirNode
	switch e := parent.entries[i]; e.Mode {
	case filemode.Dir:
		if n, err = t.loadDir(e.Hash); err != nil {
			return nil, err
		}
	case filemode.Submodule:
		n = &dirNode{}
	default:
		return nil, fs.ErrNotExist
	}
	t.dirs[p] = n
	return n, nil
}

// blob reads a whole blob into a buffer of its exact size (growing a
// buffer while reading would hold up to twice a large file at once), and
// verifies that it hashes to h. The caller holds mu.
func (t *treeFS) blob(h plumbing.Hash) ([]byte, error) {
	b, err := t.readBlob(h)
	return b, t.objectError(h, err)
}

func (t *treeFS) readBlob(h plumbing.Hash) ([]byte, error) {
	if t.objects != nil {
		// The same catalog file is read by several checks and from each
		// catalog that holds it: the shared read rebuilds and hashes it
		// once, and the caller gets a copy of its own.
		_, b, err := t.objects.ReadShared(h)
		if err != nil {
			return nil, err
		}
		return bytes.Clone(b), nil
	}
	b, err := object.GetBlob(t.s, h)
	if err != nil {
		return nil, err
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := make([]byte, b.Size)
	if err := gitobj.ReadExactly(gitobj.NewReader(h, plumbing.BlobObject, b.Size, r), buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// blobReader streams a blob, verified as it is read: its last Read
// returns an error wrapping ErrCorruptObject instead of io.EOF if the
// bytes are not h's. The caller holds mu.
func (t *treeFS) blobReader(h plumbing.Hash) (io.ReadCloser, error) {
	r, err := t.openBlob(h)
	return r, t.objectError(h, err)
}

func (t *treeFS) openBlob(h plumbing.Hash) (io.ReadCloser, error) {
	if t.objects != nil {
		r, _, _, err := t.objects.Open(h)
		return r, err
	}
	b, err := object.GetBlob(t.s, h)
	if err != nil {
		return nil, err
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{gitobj.NewReader(h, plumbing.BlobObject, b.Size, r), r}, nil
}

// info describes a node. The caller holds mu.
func (t *treeFS) info(n node) (*fileInfo, error) {
	fi := &fileInfo{name: path.Base(n.path), modTime: t.modTime, hash: n.entry.Hash}
	switch n.entry.Mode {
	case filemode.Dir, filemode.Submodule:
		fi.mode = fs.ModeDir | 0o555
	case filemode.Symlink:
		fi.mode = fs.ModeSymlink | 0o777
	case filemode.Executable:
		fi.mode = 0o555
	default:
		fi.mode = 0o444
	}
	if fi.mode&fs.ModeDir == 0 {
		size, err := t.s.EncodedObjectSize(n.entry.Hash)
		if err != nil {
			return nil, t.objectError(n.entry.Hash, err)
		}
		fi.size = size
	}
	return fi, nil
}

// pathError wraps err with the operation and path, and keeps the first
// misread (an object that does not hash to its id) for Misread.
func (t *treeFS) pathError(op, name string, err error) error {
	if oe, ok := Unreadable(err); ok && oe.Path == "" {
		oe.Path = name
	}
	if errors.Is(err, gitobj.ErrCorrupt) {
		t.misread.CompareAndSwap(nil, &fs.PathError{Op: op, Path: name, Err: err})
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// Misread returns the first read of a tree from TreeFS or FromGit that
// failed because the bytes were not the object git named (it wraps
// ErrCorruptObject and names the path), or nil. Whoever judges a tree
// asks it after judging: a reader that took such a failure for a finding,
// or worked around it, judged bytes that are not the repository's, and
// its verdict must be dropped. It is nil for any other file system.
func Misread(fsys fs.FS) error {
	t, ok := fsys.(*treeFS)
	if !ok {
		return nil
	}
	if err := t.misread.Load(); err != nil {
		return err
	}
	return nil
}

// Open opens name, following symbolic links inside the tree.
func (t *treeFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	hops := 0
	n, err := t.resolve(name, &hops)
	if err != nil {
		return nil, t.pathError("open", name, err)
	}
	fi, err := t.info(n)
	if err != nil {
		return nil, t.pathError("open", name, err)
	}
	fi.name = path.Base(name)
	if fi.IsDir() {
		d, err := t.dir(n.path)
		if err != nil {
			return nil, t.pathError("open", name, err)
		}
		entries, err := t.dirEntries(n.path, d)
		if err != nil {
			return nil, t.pathError("open", name, err)
		}
		return &dirFile{info: fi, entries: entries}, nil
	}
	return &blobFile{fs: t, info: fi, path: name}, nil
}

func (t *treeFS) dirEntries(dirPath string, d *dirNode) ([]fs.DirEntry, error) {
	out := make([]fs.DirEntry, 0, len(d.entries))
	for _, e := range d.entries {
		out = append(out, &dirEntry{t: t, n: node{path: join(dirPath, e.Name), entry: e}})
	}
	return out, nil
}

// dirEntry is a directory entry whose FileInfo is made when asked for:
// the size of a blob takes reading its object, which a walk that only
// needs names and types (most of them) should not pay for.
type dirEntry struct {
	t *treeFS
	n node
}

func (e *dirEntry) Name() string { return path.Base(e.n.path) }
func (e *dirEntry) IsDir() bool  { return e.Type().IsDir() }

func (e *dirEntry) Type() fs.FileMode {
	switch e.n.entry.Mode {
	case filemode.Dir, filemode.Submodule:
		return fs.ModeDir
	case filemode.Symlink:
		return fs.ModeSymlink
	}
	return 0
}

func (e *dirEntry) Info() (fs.FileInfo, error) {
	e.t.mu.Lock()
	defer e.t.mu.Unlock()
	fi, err := e.t.info(e.n)
	if err != nil {
		return nil, e.t.pathError("stat", e.n.path, err)
	}
	return fi, nil
}

func (e *dirEntry) String() string { return fs.FormatDirEntry(e) }

// ReadDir lists the directory name, sorted by file name.
func (t *treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	hops := 0
	n, err := t.resolve(name, &hops)
	if err != nil {
		return nil, t.pathError("readdir", name, err)
	}
	if n.entry.Mode != filemode.Dir && n.entry.Mode != filemode.Submodule {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	d, err := t.dir(n.path)
	if err != nil {
		return nil, t.pathError("readdir", name, err)
	}
	entries, err := t.dirEntries(n.path, d)
	if err != nil {
		return nil, t.pathError("readdir", name, err)
	}
	return entries, nil
}

// ReadFile reads the whole file name, following symbolic links.
func (t *treeFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	hops := 0
	n, err := t.resolve(name, &hops)
	if err != nil {
		return nil, t.pathError("readfile", name, err)
	}
	if n.entry.Mode == filemode.Dir || n.entry.Mode == filemode.Submodule {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errors.New("is a directory")}
	}
	b, err := t.blob(n.entry.Hash)
	if err != nil {
		return nil, t.pathError("readfile", name, err)
	}
	return b, nil
}

// Stat describes name, following symbolic links.
func (t *treeFS) Stat(name string) (fs.FileInfo, error) {
	return t.stat("stat", name, true)
}

// Lstat describes name without following a link in its last element.
func (t *treeFS) Lstat(name string) (fs.FileInfo, error) {
	return t.stat("lstat", name, false)
}

func (t *treeFS) stat(op, name string, follow bool) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	hops := 0
	var n node
	var err error
	if follow {
		n, err = t.resolve(name, &hops)
	} else {
		n, err = t.lookup(name, &hops)
	}
	if err != nil {
		return nil, t.pathError(op, name, err)
	}
	fi, err := t.info(n)
	if err != nil {
		return nil, t.pathError(op, name, err)
	}
	fi.name = path.Base(name)
	return fi, nil
}

// ReadLink returns the target of the symbolic link name, as stored.
func (t *treeFS) ReadLink(name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	hops := 0
	n, err := t.lookup(name, &hops)
	if err != nil {
		return "", t.pathError("readlink", name, err)
	}
	if n.entry.Mode != filemode.Symlink {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	b, err := t.blob(n.entry.Hash)
	if err != nil {
		return "", t.pathError("readlink", name, err)
	}
	return string(b), nil
}

type fileInfo struct {
	name    string
	size    int64
	mode    fs.FileMode
	modTime time.Time
	hash    plumbing.Hash
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.size }
func (fi *fileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *fileInfo) ModTime() time.Time { return fi.modTime }
func (fi *fileInfo) IsDir() bool        { return fi.mode.IsDir() }

// Sys returns the git object id of the entry, a plumbing.Hash.
func (fi *fileInfo) Sys() any { return fi.hash }

// blobFile is an open regular file. Read streams the blob from the
// repository, so that a reader that copies the file into a buffer of its
// own holds it once, not twice; ReadAt and Seek, which few readers need,
// read it whole on first use. Opening a file just to Stat it reads nothing.
type blobFile struct {
	fs     *treeFS
	info   *fileInfo
	path   string
	stream io.ReadCloser
	off    int64 // how far stream has read
	r      *bytes.Reader
	closed bool
}

func (f *blobFile) Stat() (fs.FileInfo, error) { return f.info, nil }

func (f *blobFile) check(op string) error {
	if f.closed {
		return &fs.PathError{Op: op, Path: f.path, Err: fs.ErrClosed}
	}
	return nil
}

// whole returns the file read whole, positioned where sequential reads
// have got to.
func (f *blobFile) whole(op string) (*bytes.Reader, error) {
	if err := f.check(op); err != nil {
		return nil, err
	}
	if f.r == nil {
		b, err := f.fs.ReadFile(f.path)
		if err != nil {
			return nil, err
		}
		f.r = bytes.NewReader(b)
		if _, err := f.r.Seek(f.off, io.SeekStart); err != nil {
			return nil, err
		}
		if f.stream != nil {
			f.stream.Close()
			f.stream = nil
		}
	}
	return f.r, nil
}

func (f *blobFile) Read(p []byte) (int, error) {
	if err := f.check("read"); err != nil {
		return 0, err
	}
	if f.r != nil {
		return f.r.Read(p)
	}
	if f.fs.objects == nil {
		// go-git's object storage is not safe for concurrent use, and a
		// stream may read through a pack file it shares. The verified
		// store is: files of one tree are read in parallel.
		f.fs.mu.Lock()
		defer f.fs.mu.Unlock()
	}
	if f.stream == nil {
		r, err := f.fs.blobReader(f.info.hash)
		if err != nil {
			return 0, f.fs.pathError("read", f.path, err)
		}
		f.stream = r
	}
	n, err := f.stream.Read(p)
	f.off += int64(n)
	if err != nil && err != io.EOF {
		// A misread object says which one; the path says where it was.
		err = f.fs.pathError("read", f.path, f.fs.objectError(f.info.hash, err))
	}
	return n, err
}

// Bytes returns the whole content of the file, verified, whatever has
// been read of it so far. The bytes may be shared with the repository's
// cache of objects: the caller must not modify them. A reader that wants
// the file whole (a catalog decoder) is spared the copy that Read makes.
func (f *blobFile) Bytes() ([]byte, error) {
	if err := f.check("read"); err != nil {
		return nil, err
	}
	var b []byte
	var err error
	if f.fs.objects != nil {
		_, b, err = f.fs.objects.ReadShared(f.info.hash)
		err = f.fs.objectError(f.info.hash, err)
	} else {
		f.fs.mu.Lock()
		b, err = f.fs.blob(f.info.hash)
		f.fs.mu.Unlock()
	}
	if err != nil {
		return nil, f.fs.pathError("read", f.path, err)
	}
	return b, nil
}

func (f *blobFile) ReadAt(p []byte, off int64) (int, error) {
	r, err := f.whole("read")
	if err != nil {
		return 0, err
	}
	return r.ReadAt(p, off)
}

func (f *blobFile) Seek(offset int64, whence int) (int64, error) {
	r, err := f.whole("seek")
	if err != nil {
		return 0, err
	}
	return r.Seek(offset, whence)
}

func (f *blobFile) Close() error {
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.path, Err: fs.ErrClosed}
	}
	f.closed = true
	f.r = nil
	if f.stream != nil {
		return f.stream.Close()
	}
	return nil
}

// dirFile is an open directory.
type dirFile struct {
	info    *fileInfo
	entries []fs.DirEntry
	offset  int
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }

func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}

func (d *dirFile) Close() error { return nil }

// ReadDir follows the fs.ReadDirFile contract: n > 0 returns at most n
// entries and io.EOF at the end; n <= 0 returns all that remain.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.offset:]
	if n <= 0 {
		d.offset = len(d.entries)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.offset += n
	return slices.Clone(rest[:n]), nil
}

// ObjectID returns the git object id of a file or directory of a tree
// from TreeFS, as fs.Stat or a directory entry's Info describes it: a
// directory's id names its whole content exactly. ok is false for a file
// of any other file system.
func ObjectID(fi fs.FileInfo) (id string, ok bool) {
	if h, isHash := fi.Sys().(plumbing.Hash); isHash && !h.IsZero() {
		return h.String(), true
	}
	return "", false
}

// IsObjectID says whether s is a git object id as git writes one: 40
// (SHA-1) or 64 (SHA-256) lower-case hex digits.
func IsObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
