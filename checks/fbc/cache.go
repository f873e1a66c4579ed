package fbc

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/internal/textmemo"
)

// Cache keeps the files a pass decodes, so that two loads of one file with
// the same bytes decode it once. A pull request check loads the catalog
// files of its touched packages for validation and again for the release
// guard, on both sides of the change: on a repository of one catalog per
// OpenShift version that is most of a check's time. A Cache belongs to one
// pass (WithCache), so that it holds no more than the pass reads and is
// gone with it, but for the typed documents it shares with the passes
// after it, within a bound (keptDocs); it is safe for concurrent use.
type Cache struct {
	files shared[cacheKey, *fileResult]
	docs  docMemo
	// trees are what was made of whole trees of files, by their content
	// (see contentKey): a repository of one catalog per OpenShift version
	// holds a package's files, the same blobs, in each catalog, and a
	// validation of one of those trees is a validation of every other.
	trees shared[treeKey, any]
}

// treeKey names what was made of a tree: its contentKey, and what was
// made ('v' a validation, 'p' a placed load, 'w' a whole one).
type treeKey struct {
	sum  [sha256.Size]byte
	what byte
}

// tree is what build makes of the tree k, made once however many ask at
// once, as load is for a file. A failure (a cancelled pass, a misread
// object) is not kept, nor what build says not to keep (made of a file
// that could not be read): whoever asks next makes it for itself.
func (c *Cache) tree(k treeKey, build func() (any, bool, error)) (any, error) {
	return c.trees.do(k, build)
}

// shared makes each value once however many ask for its key at once: the
// first caller builds it, every other waits for it. A value its builder
// says not to keep, or a failure, is not kept: whoever asks next builds
// it for itself.
type shared[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*sharedEntry[V]
}

// sharedEntry is one value, or one being built: done is closed once v is
// set, and ok says it was kept.
type sharedEntry[V any] struct {
	done chan struct{}
	v    V
	ok   bool
}

func (s *shared[K, V]) do(k K, build func() (V, bool, error)) (V, error) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[K]*sharedEntry[V]{}
	}
	e, found := s.m[k]
	if !found {
		e = &sharedEntry[V]{done: make(chan struct{})}
		s.m[k] = e
	}
	s.mu.Unlock()
	if found {
		<-e.done
		if e.ok {
			return e.v, nil
		}
		v, _, err := build()
		return v, err
	}
	v, keep, err := build()
	if err != nil || !keep {
		s.mu.Lock()
		delete(s.m, k)
		s.mu.Unlock()
	} else {
		e.v, e.ok = v, true
	}
	close(e.done)
	return v, err
}

// cacheKey names a decoded file: its content, the path its positions name
// and the options that change what is decoded.
type cacheKey struct {
	// sum is the SHA-256 of the content, or, for a file of a git tree,
	// its object id (kind says which).
	sum      [sha256.Size]byte
	kind     byte
	path     string
	images   bool
	exact    bool
	mentions bool
	full     bool
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{} }

type cacheCtxKey struct{}

// WithCache returns ctx with c, which Validate and LoadPlaced under it use.
func WithCache(ctx context.Context, c *Cache) context.Context {
	return context.WithValue(ctx, cacheCtxKey{}, c)
}

// CacheFrom is the cache WithCache put in ctx, nil if none.
func CacheFrom(ctx context.Context) *Cache {
	c, _ := ctx.Value(cacheCtxKey{}).(*Cache)
	return c
}

// key is the key of a file decoded with opts, false for a load whose
// results are not shared: LoadConfig's, whose blobs its caller owns.
func (c *Cache) key(data []byte, path string, opts Options) (cacheKey, bool) {
	if c == nil || opts.owned {
		return cacheKey{}, false
	}
	return cacheKey{sum: sha256.Sum256(data), path: path, images: opts.Images, exact: opts.exact, mentions: opts.mentions, full: opts.full}, true
}

// objectKey is key for a file of a git tree, named by its object id
// before it is read: false for a file of any other file system, and as
// for key.
func (c *Cache) objectKey(fi fs.FileInfo, path string, opts Options) (cacheKey, bool) {
	if c == nil || opts.owned || !fi.Mode().IsRegular() {
		return cacheKey{}, false
	}
	h, ok := fi.Sys().(plumbing.Hash)
	if !ok || h.IsZero() {
		return cacheKey{}, false
	}
	k := cacheKey{kind: 'g', path: path, images: opts.Images, exact: opts.exact, mentions: opts.mentions, full: opts.full}
	copy(k.sum[:], h[:])
	return k, true
}

// load is the decoded file of k, made by decode once however many ask at
// once: the first caller for k decodes it, and every other waits for it, so
// that two loads of one file at once (the validation and the release guard
// run side by side) decode it once, not once each. A file that could not
// be read is not kept: whoever asks next tries for itself.
func (c *Cache) load(k cacheKey, decode func() *fileResult) *fileResult {
	fr, _ := c.files.do(k, func() (*fileResult, bool, error) {
		fr := decode()
		return fr, !fr.readErr, nil
	})
	return fr
}

// docMemo keeps what a whole load made of each YAML document the fast
// path read, for the review's other files: a change to a large package
// file leaves nearly all of its documents as they were, and both sides are
// loaded whole. What is kept is shared by every load that meets the
// document again, read only, as the files of the Cache are. It lives as
// long as the review's Cache, so it is not bounded; what it meets in
// keptDocs, and what it types, it shares with the passes after it.
type docMemo struct {
	pass textmemo.Memo[*fileResult]
}

func (d *docMemo) get(k [sha256.Size]byte) (*fileResult, bool) {
	if one, ok := d.pass.Get(k); ok {
		return one, true
	}
	one, ok := keptDocs.get(k)
	if ok {
		d.pass.Put(k, one)
	}
	return one, ok
}

// put keeps one, typed from a document of size bytes of text.
func (d *docMemo) put(k [sha256.Size]byte, one *fileResult, size int) {
	d.pass.Put(k, one)
	keptDocs.put(k, one, size)
}

// keptDocs keeps what whole loads typed, past the pass that typed it. The
// App judges one package's documents again and again: a pull request
// after each push to it, the tree main will hold once it is queued, and
// the next pull request to the same package, whose base is the last one's
// head. What a document types to depends on its text alone (typeDoc), so
// a pass that meets a document typed before takes it as its own docMemo
// would. A typed document holds about its text in memory (1.0 to 1.1
// times, measured on community-operators-prod's catalog files), so the
// memo is bounded by the text of what it holds: KeptDocsBytes.
var keptDocs = &generations[*fileResult]{max: KeptDocsBytes / 2}

// KeptDocsBytes bounds the text of the documents whose typed form is kept
// from one pass to the next (keptDocs): the memory a long-lived process
// holds for it, at most, besides what its checks hold while they run.
const KeptDocsBytes = 16 << 20

// generations keeps values by key in two generations of at most max bytes
// each: a value goes into the newer, and once that is full it becomes the
// older and the older is dropped. A value met in the older is moved to the
// newer, so what is met again and again stays, as in a cache that drops the
// least recently used, without the bookkeeping of one. A value larger than
// max is not kept.
type generations[V any] struct {
	mu       sync.Mutex
	max      int
	cur, old map[[sha256.Size]byte]sized[V]
	curBytes int
	// hits and misses count the lookups, for tests.
	hits, misses int
}

type sized[V any] struct {
	v    V
	size int
}

func (g *generations[V]) get(k [sha256.Size]byte) (V, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.cur[k]; ok {
		g.hits++
		return e.v, true
	}
	if e, ok := g.old[k]; ok {
		g.hits++
		delete(g.old, k)
		g.add(k, e)
		return e.v, true
	}
	g.misses++
	var zero V
	return zero, false
}

func (g *generations[V]) put(k [sha256.Size]byte, v V, size int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.cur[k]; ok {
		return
	}
	delete(g.old, k)
	g.add(k, sized[V]{v, size})
}

// add puts e in the newer generation, starting a new one first if e does
// not fit; g.mu is held.
func (g *generations[V]) add(k [sha256.Size]byte, e sized[V]) {
	if e.size > g.max {
		return
	}
	if g.cur == nil || g.curBytes+e.size > g.max {
		g.old, g.cur, g.curBytes = g.cur, map[[sha256.Size]byte]sized[V]{}, 0
	}
	g.cur[k] = e
	g.curBytes += e.size
}

// bytes is the size of what g holds.
func (g *generations[V]) bytes() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.curBytes
	for _, e := range g.old {
		n += e.size
	}
	return n
}
