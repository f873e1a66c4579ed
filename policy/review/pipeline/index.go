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
	// misses counts the directories read, for tests.
	misses int
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

func (c *namesCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}

// packageIndex lists, for the catalog root fsys, the package directories
// that mention each package, by package name. Directories without a tree
// id (a file system other than a git tree) are read every time.
func packageIndex(ctx context.Context, fsys fs.FS) (map[string][]string, error) {
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
	keys := map[string]string{}
	missing := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		key := ""
		if info, err := e.Info(); err == nil {
			if id, ok := change.ObjectID(info); ok {
				key = salt + "/" + e.Name() + "@" + id
			}
		}
		if key != "" {
			if names, ok := dirNamesCache.get(key); ok {
				byDir[e.Name()] = names
				continue
			}
			keys[e.Name()] = key
		}
		missing[e.Name()] = true
	}
	if len(missing) > 0 {
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
			if key := keys[dir]; key != "" {
				dirNamesCache.put(key, names)
			}
		}
	}
	index := map[string][]string{}
	for _, dir := range slices.Sorted(maps.Keys(byDir)) {
		for _, pkg := range byDir[dir] {
			index[pkg] = append(index[pkg], dir)
		}
	}
	return index, nil
}
