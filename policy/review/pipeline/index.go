package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
)

// A package index says, for every package of a catalog root, which
// package directories hold blobs that mention it. The scope of a change
// grows through it: a package kept in a directory of another name on the
// base (a layout break the change did not make) still joins the scope, so
// that defining it again, anywhere, is the duplicate the whole catalog
// would report. With it the scope is closed under shared package names,
// and opm's rules relate blobs through package names only, so the verdict
// on the scope is the verdict on the whole head catalog.
//
// Reading every directory of a large catalog for every change would cost
// what validating the whole catalog costs. A git tree id names a
// directory's content exactly, so what a directory mentions is cached by
// its tree id: after the first change of a base, a change costs only the
// directories whose trees are new.

// dirNamesCache maps a package directory's content to the package names
// its blobs mention. The key is the tree id with the directory's name and
// the root's .indexignore (whose patterns can name the directory), which
// is everything outside the tree that decides what is read.
var dirNamesCache = &namesCache{m: map[string][]string{}}

// maxCachedDirs bounds the cache; past it the cache starts afresh, which
// costs one slow change and never a wrong answer.
const maxCachedDirs = 1 << 18

type namesCache struct {
	mu sync.Mutex
	m  map[string][]string
	// misses counts the directories not found in memory, reads those
	// read from git, for tests.
	misses, reads int
}

func (c *namesCache) get(key string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	names, ok := c.m[key]
	if !ok {
		c.misses++
	}
	return names, ok
}

func (c *namesCache) put(key string, names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedDirs {
		clear(c.m)
	}
	c.m[key] = names
}

func (c *namesCache) read(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads += n
}

func (c *namesCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}

// packageIndex lists, for the catalog root fsys, the package directories
// that mention each package, by package name. Directories without a tree
// id (a file system other than a git tree) are read every time.
//
// store, when not nil, keeps the index on disk across processes: what a
// directory mentions is looked up in memory, then in the store's index of
// this root tree or, failing that, of the tree of the same scope (the
// root's path) saved last, and only the directories none of them knows
// are read. The index of the root tree is saved back when it had to be
// derived.
func packageIndex(ctx context.Context, fsys fs.FS, store *pkgindex.Store, scope string) (map[string][]string, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	ignore, err := fs.ReadFile(fsys, ".indexignore")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	sum := sha256.Sum256(ignore)
	salt := hex.EncodeToString(sum[:8])

	byDir := map[string][]string{}
	trees := map[string]string{}
	missing := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if info, err := e.Info(); err == nil {
			if id, ok := change.ObjectID(info); ok {
				trees[e.Name()] = id
				if names, ok := dirNamesCache.get(dirKey(salt, e.Name(), id)); ok {
					byDir[e.Name()] = names
					continue
				}
			}
		}
		missing[e.Name()] = true
	}
	rootTree := ""
	if store != nil {
		if info, err := fs.Stat(fsys, "."); err == nil {
			rootTree, _ = change.ObjectID(info)
		}
	}
	// derived says the store has no index of this very tree yet.
	derived := false
	if rootTree != "" && len(missing) > 0 {
		saved, ok := store.Load(rootTree)
		if !ok {
			derived = true
			saved, _ = store.Nearest(scope)
		}
		for dir := range missing {
			if id := trees[dir]; id != "" {
				if names, ok := saved.Lookup(salt, dir, id); ok {
					byDir[dir] = names
					dirNamesCache.put(dirKey(salt, dir, id), names)
					delete(missing, dir)
				}
			}
		}
	}
	if len(missing) > 0 {
		derived = true
		dirNamesCache.read(len(missing))
		scoped, err := newScopedFS(fsys, missing)
		if err != nil {
			return nil, err
		}
		mentions, err := fbc.Mentions(ctx, scoped)
		if err != nil {
			return nil, err
		}
		found := map[string][]string{}
		for pkg, places := range mentions {
			for _, p := range places {
				if dir, _, nested := strings.Cut(p.File, "/"); nested && missing[dir] && !slices.Contains(found[dir], pkg) {
					found[dir] = append(found[dir], pkg)
				}
			}
		}
		for dir := range missing {
			names := found[dir]
			slices.Sort(names)
			byDir[dir] = names
			if id := trees[dir]; id != "" {
				dirNamesCache.put(dirKey(salt, dir, id), names)
			}
		}
	}
	if rootTree != "" && !derived {
		// Known in this process: saved once, for the next one.
		derived = !store.Has(rootTree)
	}
	if rootTree != "" && derived {
		r := &pkgindex.Root{Tree: rootTree, Salt: salt}
		for dir, id := range trees {
			r.Entries = append(r.Entries, pkgindex.Entry{Dir: dir, Tree: id, Packages: byDir[dir]})
		}
		// A store that cannot be written costs the next process the
		// read this one made, never a wrong answer.
		_ = store.Save(scope, r)
	}
	index := map[string][]string{}
	for _, dir := range slices.Sorted(maps.Keys(byDir)) {
		for _, pkg := range byDir[dir] {
			index[pkg] = append(index[pkg], dir)
		}
	}
	return index, nil
}

// dirKey is a package directory's key in dirNamesCache: its tree id with
// its name and the root's .indexignore (whose patterns can name it),
// which is everything outside the tree that decides what is read.
func dirKey(salt, dir, id string) string { return salt + "/" + dir + "@" + id }
