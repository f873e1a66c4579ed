package fbc

import (
	"context"
	"crypto/sha256"
	"sync"
)

// Cache keeps the files a pass decodes, so that two loads of one file with
// the same bytes decode it once. A pull request check loads the catalog
// files of its touched packages for validation and again for the release
// guard, on both sides of the change: on a repository of one catalog per
// OpenShift version that is most of a check's time. A Cache belongs to one
// pass (WithCache), so that it holds no more than the pass reads and is
// gone with it; it is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	files map[cacheKey]*fileResult
}

// cacheKey names a decoded file: its content, the path its positions name
// and the options that change what is decoded.
type cacheKey struct {
	sum    [sha256.Size]byte
	path   string
	images bool
	exact  bool
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{files: map[cacheKey]*fileResult{}} }

type cacheCtxKey struct{}

// WithCache returns ctx with c, which Validate and LoadPlaced under it use.
func WithCache(ctx context.Context, c *Cache) context.Context {
	return context.WithValue(ctx, cacheCtxKey{}, c)
}

func cacheFrom(ctx context.Context) *Cache {
	c, _ := ctx.Value(cacheCtxKey{}).(*Cache)
	return c
}

// key is the key of a file decoded with opts, false for a load whose
// results are not shared: LoadConfig's, whose blobs its caller owns.
func (c *Cache) key(data []byte, path string, opts Options) (cacheKey, bool) {
	if c == nil || opts.full {
		return cacheKey{}, false
	}
	return cacheKey{sum: sha256.Sum256(data), path: path, images: opts.Images, exact: opts.exact}, true
}

func (c *Cache) get(k cacheKey) *fileResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.files[k]
}

func (c *Cache) put(k cacheKey, fr *fileResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files[k] = fr
}
