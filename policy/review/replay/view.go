package replay

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/policy"
)

// missing records the first read of a tree that failed because a git object
// is absent from the repository (a partial or shallow clone). A review that
// hit one judged a tree it could not read, so its verdict is not the
// commit's: the commit is reported unreadable instead.
type missing struct {
	mu   sync.Mutex
	path string
	err  error
}

func (m *missing) note(side, name string, err error) error {
	if err != nil && errors.Is(err, plumbing.ErrObjectNotFound) {
		m.mu.Lock()
		if m.err == nil {
			m.path, m.err = side+":"+name, err
		}
		m.mu.Unlock()
	}
	return err
}

func (m *missing) first() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.path, m.err
}

// view is a commit's tree as the review reads it: every read that misses
// an object is noted, and on the base side the policy file may be replaced
// by the one under trial. File infos are the tree's own, so the review's
// caches keyed by git object ids keep working.
type view struct {
	fsys fs.FS
	side string
	m    *missing
	// policy, when not nil, is read as the policy file at the root.
	policy []byte
}

var (
	_ fs.ReadDirFS  = view{}
	_ fs.ReadFileFS = view{}
	_ fs.StatFS     = view{}
	_ fs.ReadLinkFS = view{}
)

func (v view) isPolicy(name string) bool { return v.policy != nil && name == policy.FileName }

func (v view) Open(name string) (fs.File, error) {
	if v.isPolicy(name) {
		return &policyFile{info: policyInfo(len(v.policy)), data: v.policy}, nil
	}
	f, err := v.fsys.Open(name)
	if err != nil {
		return nil, v.m.note(v.side, name, err)
	}
	if v.policy != nil && name == "." {
		// The root lists the policy file under trial, as ReadDir does.
		entries, err := v.ReadDir(".")
		if err != nil {
			f.Close()
			return nil, err
		}
		return &rootDir{File: f, entries: entries}, nil
	}
	return file{File: f, name: name, v: v}, nil
}

// rootDir is the root directory opened with a policy file under trial.
type rootDir struct {
	fs.File
	entries []fs.DirEntry
	off     int
}

func (d *rootDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.off += len(rest)
	return slices.Clone(rest), nil
}

func (v view) ReadFile(name string) ([]byte, error) {
	if v.isPolicy(name) {
		return slices.Clone(v.policy), nil
	}
	b, err := fs.ReadFile(v.fsys, name)
	return b, v.m.note(v.side, name, err)
}

func (v view) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(v.fsys, name)
	if err != nil {
		return nil, v.m.note(v.side, name, err)
	}
	if v.policy == nil || name != "." {
		return entries, nil
	}
	entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return e.Name() == policy.FileName })
	entries = append(entries, fs.FileInfoToDirEntry(policyInfo(len(v.policy))))
	slices.SortFunc(entries, func(a, b fs.DirEntry) int {
		switch {
		case a.Name() < b.Name():
			return -1
		case a.Name() > b.Name():
			return 1
		}
		return 0
	})
	return entries, nil
}

func (v view) Stat(name string) (fs.FileInfo, error) {
	if v.isPolicy(name) {
		return policyInfo(len(v.policy)), nil
	}
	fi, err := fs.Stat(v.fsys, name)
	return fi, v.m.note(v.side, name, err)
}

// ReadLink and Lstat keep the tree's symbolic links visible to the
// review, as they are without the wrapper.
func (v view) ReadLink(name string) (string, error) {
	if v.isPolicy(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	target, err := fs.ReadLink(v.fsys, name)
	return target, v.m.note(v.side, name, err)
}

func (v view) Lstat(name string) (fs.FileInfo, error) {
	if v.isPolicy(name) {
		return policyInfo(len(v.policy)), nil
	}
	fi, err := fs.Lstat(v.fsys, name)
	return fi, v.m.note(v.side, name, err)
}

// file notes the missing objects a streamed read runs into.
type file struct {
	fs.File
	name string
	v    view
}

func (f file) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	return n, f.v.m.note(f.v.side, f.name, err)
}

func (f file) ReadDir(n int) ([]fs.DirEntry, error) {
	d, ok := f.File.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: f.name, Err: errors.New("not a directory")}
	}
	entries, err := d.ReadDir(n)
	return entries, f.v.m.note(f.v.side, f.name, err)
}

// policyInfo describes the policy file under trial.
type policyInfo int

func (p policyInfo) Name() string       { return path.Base(policy.FileName) }
func (p policyInfo) Size() int64        { return int64(p) }
func (p policyInfo) Mode() fs.FileMode  { return 0o444 }
func (p policyInfo) ModTime() time.Time { return time.Time{} }
func (p policyInfo) IsDir() bool        { return false }
func (p policyInfo) Sys() any           { return nil }

type policyFile struct {
	info policyInfo
	data []byte
	off  int
}

func (f *policyFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *policyFile) Close() error               { return nil }
func (f *policyFile) Read(p []byte) (int, error) {
	if f.off >= len(f.data) {
		return 0, io.EOF
	}
	n := copy(p, f.data[f.off:])
	f.off += n
	return n, nil
}
