package replay

import (
	"io"
	"io/fs"
	"path"
	"slices"
	"time"

	"github.com/catalogbot/catalogbot/policy"
)

// view is a base commit's tree with the policy file replaced by the one
// under trial. File infos are the tree's own, so the review's caches
// keyed by git object ids keep working, and errors are the tree's own, so
// that the review judges a read it cannot make as it would without the
// wrapper.
type view struct {
	fsys fs.FS
	// policy is read as the policy file at the root.
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
		return nil, err
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
	return f, nil
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
	return fs.ReadFile(v.fsys, name)
}

func (v view) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(v.fsys, name)
	if err != nil {
		return nil, err
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
	return fs.Stat(v.fsys, name)
}

// ReadLink and Lstat keep the tree's symbolic links visible to the
// review, as they are without the wrapper.
func (v view) ReadLink(name string) (string, error) {
	if v.isPolicy(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return fs.ReadLink(v.fsys, name)
}

func (v view) Lstat(name string) (fs.FileInfo, error) {
	if v.isPolicy(name) {
		return policyInfo(len(v.policy)), nil
	}
	return fs.Lstat(v.fsys, name)
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
