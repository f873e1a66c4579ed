package changetest

import (
	"io/fs"
	"sync/atomic"
)

// CountingFS is a tree that counts the reads of the files Match accepts:
// how often a file is opened or read whole. It passes everything else,
// the git object ids of fs.FileInfo.Sys and symbolic links included, to
// the tree it wraps, so that a reader keyed by tree ids treats both
// alike.
type CountingFS struct {
	FS    fs.FS
	Match func(name string) bool
	reads atomic.Int64
}

// Reads are the reads counted since the last Reset.
func (c *CountingFS) Reads() int64 { return c.reads.Load() }

// Reset starts the count again.
func (c *CountingFS) Reset() { c.reads.Store(0) }

func (c *CountingFS) count(name string) {
	if c.Match(name) {
		c.reads.Add(1)
	}
}

func (c *CountingFS) Open(name string) (fs.File, error) {
	c.count(name)
	return c.FS.Open(name)
}

func (c *CountingFS) ReadFile(name string) ([]byte, error) {
	c.count(name)
	return fs.ReadFile(c.FS, name)
}

func (c *CountingFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(c.FS, name) }
func (c *CountingFS) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(c.FS, name) }
func (c *CountingFS) Lstat(name string) (fs.FileInfo, error)     { return fs.Lstat(c.FS, name) }
func (c *CountingFS) ReadLink(name string) (string, error)       { return fs.ReadLink(c.FS, name) }
