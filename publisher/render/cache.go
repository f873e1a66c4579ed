package render

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// This file keeps bundle images rendered once. A registry reference pinned
// by digest names one content, so it renders to one bundle whoever asks:
// the templates check, the reference list and the bundle truthfulness
// check of one pull request, and the next pull request that names the same
// image, take it from here instead of pulling it again. Only bundle images
// are kept (a few hundred kilobytes each); catalog images are large and
// rendered where they are needed. Tags move, so a reference by tag is
// always pulled.

// DefaultCacheBytes bounds a Renderer's cache of rendered bundle images
// when Options.CacheBytes is 0.
const DefaultCacheBytes = 64 << 20

// bundleCache maps a digest reference to the bundle its image rendered
// to, before the finishing touches (they depend on the migration level and
// change the blob in place, so each hit is finished on a copy). It is safe
// for concurrent use; past max bytes the oldest entries go first.
type bundleCache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	m     map[string]*cached
	order []string
	// hits counts the renders served from the cache, for tests.
	hits int
}

type cached struct {
	bundle declcfg.Bundle
	csv    string
	// size is the file content the image unpacked to, which a renderer
	// with a smaller Options.MaxBytes refuses as it would have refused
	// the pull: a verdict never depends on what is cached.
	size int64
	cost int64
}

func newBundleCache(max int64) *bundleCache {
	return &bundleCache{max: max, m: map[string]*cached{}}
}

// cacheable says whether a reference names its image by digest in a
// registry.
func cacheable(ref string) bool {
	return strings.Contains(ref, "@sha256:") && !strings.HasPrefix(ref, ociPrefix)
}

func (c *bundleCache) get(ref string) (*cached, bool) {
	if c == nil || c.max <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[ref]
	if ok {
		c.hits++
	}
	return e, ok
}

func (c *bundleCache) put(ref string, res *result, size int64) {
	if c == nil || c.max <= 0 || len(res.cfg.Bundles) != 1 || len(res.csvJSON) != 1 {
		return
	}
	b := res.cfg.Bundles[0]
	e := &cached{bundle: copyBundle(b), csv: res.csvJSON[0], size: size, cost: int64(len(res.csvJSON[0]))}
	for _, p := range b.Properties {
		e.cost += int64(len(p.Type) + len(p.Value))
	}
	if e.cost > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[ref]; ok {
		return
	}
	for c.used+e.cost > c.max && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.used -= c.m[old].cost
		delete(c.m, old)
	}
	c.m[ref] = e
	c.order = append(c.order, ref)
	c.used += e.cost
}

// result is a fresh copy of the entry, for the finishing touches to work
// on.
func (e *cached) result() *result {
	return &result{cfg: &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{copyBundle(e.bundle)}}, csvJSON: []string{e.csv}}
}

// copyBundle copies the lists that rendering reorders and migrates; the
// property values themselves are never written.
func copyBundle(b declcfg.Bundle) declcfg.Bundle {
	b.Properties = slices.Clone(b.Properties)
	b.RelatedImages = slices.Clone(b.RelatedImages)
	return b
}

// treeSize is the file content under root, as extractTree wrote it.
func treeSize(root string) int64 {
	var n int64
	filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// CacheHits counts the renders r's cache has served, for tests that show a
// bundle image is pulled once.
func (r *Renderer) CacheHits() int {
	if r.cache == nil {
		return 0
	}
	r.cache.mu.Lock()
	defer r.cache.mu.Unlock()
	return r.cache.hits
}
