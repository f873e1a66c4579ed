package pipeline

import (
	"io"
	"io/fs"
	"sync"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
)

// fileBlobs is fbc.Blobs of the file p of fsys. A file of a git tree is
// known by its object id, which fixes its content (every read from git is
// verified against it), so its blobs are decoded once per process: the
// owners evaluation, the release guard and the base's packages all ask for
// the same changed files, and the App's next pull request for most of
// them again. A hit still charges the file to the check's budget, as the
// read it replaces would have.
//
// Under a review's cache the file is read as a whole load reads it, so
// that the validation of the same file types none of its documents again
// (fbc.Cache.Blobs).
func fileBlobs(fsys fs.FS, p string, cache *fbc.Cache) ([]fbc.Blob, error) {
	var id string
	if fi, err := fs.Stat(fsys, p); err == nil && fi.Mode().IsRegular() {
		id, _ = change.ObjectID(fi)
	}
	if id != "" {
		if blobs, ok := blobsCache.get(id); ok {
			if l, ok := fsys.(limitedFS); ok {
				if err := l.admit(p); err != nil {
					return nil, err
				}
			}
			return blobs, nil
		}
	}
	data, err := readShared(fsys, p)
	if err != nil {
		return nil, err
	}
	blobs := cache.Blobs(data)
	if id != "" {
		blobsCache.put(id, blobs)
	}
	return blobs, nil
}

// blobsCache maps a git blob id to the catalog blobs of its content; the
// slices are shared and never modified.
var blobsCache = &blobsByID{m: map[string][]fbc.Blob{}}

// maxCachedBlobs bounds the catalog blobs the cache holds (about 100
// bytes each); past it the cache starts afresh, which costs decoding
// again and never a wrong answer.
const maxCachedBlobs = 1 << 18

type blobsByID struct {
	mu sync.Mutex
	m  map[string][]fbc.Blob
	n  int
	// misses counts the files decoded, for tests.
	misses int
}

func (c *blobsByID) get(id string) ([]fbc.Blob, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[id]
	if !ok {
		c.misses++
	}
	return b, ok
}

func (c *blobsByID) put(id string, blobs []fbc.Blob) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; ok {
		return
	}
	if c.n+len(blobs) > maxCachedBlobs {
		c.m, c.n = map[string][]fbc.Blob{}, 0
	}
	c.m[id] = blobs
	c.n += len(blobs)
}

// readShared reads p for a reader that does not write to what it gets: a
// file of a git tree hands over its verified content without the copy
// fs.ReadFile makes (the same file of a large package is read by several
// checks, each read a copy of a megabyte).
func readShared(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if w, ok := f.(interface{ Bytes() ([]byte, error) }); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			// The error names the path and the object already.
			return w.Bytes()
		}
	}
	return io.ReadAll(f)
}
