package pipeline

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
)

// TouchedPackages attributes every catalog blob that the change adds,
// removes or changes to its package (spec/owners.md section 4), so that
// the package's owners must approve wherever the blob sits: a file in
// alice's directory can hold blobs of bob's package.
//
// Each changed file is compared as a whole between the base and the head:
// the blobs of its path and of the path it was renamed from, on each side,
// as multisets of (package, canonical content). Comparing content rather
// than trusting the file's status means a rename, a copy or a status the
// forge got wrong cannot hide a blob. Only files under a catalog root hold
// blobs; a blob's package is at home in <root>/<package>/ of the root it
// sits in.
func TouchedPackages(c *change.Change, base, head fs.FS, roots []string, layout string) ([]owners.PackageTouch, error) {
	return touchedPackages(nil, c, base, head, roots, layout)
}

// touchedPackages is TouchedPackages that reads the changed files under
// cache, which a whole load of them later in the pass shares (see
// fbc.Cache.Blobs); nil reads them on their own.
func touchedPackages(cache *fbc.Cache, c *change.Change, base, head fs.FS, roots []string, layout string) ([]owners.PackageTouch, error) {
	if c == nil {
		return nil, nil
	}
	// home is the package's directory below the root. Under the
	// directories layout it is the directory its blobs sit in, whatever
	// its name; otherwise the directory of its name.
	byDir := layout == policy.LayoutDirectories
	type key struct{ root, pkg, home string }
	type tally struct {
		added, removed int
		files          []string
	}
	touched := map[key]*tally{}
	for _, f := range c.Files {
		paths := []string{f.Path}
		if f.PreviousPath != "" && f.PreviousPath != f.Path {
			paths = append(paths, f.PreviousPath)
		}
		type blobKey struct {
			root, pkg, home string
			sum             [sha256.Size]byte
		}
		count := map[blobKey]int{}
		where := map[blobKey][]string{}
		for side, fsys := range []fs.FS{base, head} {
			for _, p := range paths {
				root, ok := rootOf(p, roots)
				if !ok || fsys == nil {
					continue
				}
				blobs, err := fileBlobs(fsys, p, cache)
				switch {
				case errors.Is(err, fs.ErrNotExist):
					continue
				case err != nil:
					// Unread content may hold any package's blobs, so no
					// verdict can be given on whose approval it needs.
					return nil, fmt.Errorf("read %s to attribute its blobs to packages: %w", p, err)
				}
				home := ""
				if byDir {
					if dir, _, nested := strings.Cut(strings.TrimPrefix(p, root+"/"), "/"); nested && root != "." {
						home = path.Join(root, dir) + "/"
					} else if nested {
						home = dir + "/"
					}
				}
				for _, b := range blobs {
					if b.Package == "" {
						continue
					}
					k := blobKey{root, b.Package, home, b.Sum}
					if side == 0 {
						count[k]--
					} else {
						count[k]++
					}
					if !slices.Contains(where[k], p) {
						where[k] = append(where[k], p)
					}
				}
			}
		}
		for k, n := range count {
			if n == 0 {
				continue
			}
			t := touched[key{k.root, k.pkg, k.home}]
			if t == nil {
				t = &tally{}
				touched[key{k.root, k.pkg, k.home}] = t
			}
			if n > 0 {
				t.added += n
			} else {
				t.removed -= n
			}
			for _, p := range where[k] {
				if !slices.Contains(t.files, p) {
					t.files = append(t.files, p)
				}
			}
		}
	}
	out := make([]owners.PackageTouch, 0, len(touched))
	for k, t := range touched {
		slices.Sort(t.files)
		pt := owners.PackageTouch{Name: k.pkg, Files: t.files, Why: blobsWhy(t.added, t.removed, t.files), Added: t.added, Removed: t.removed}
		switch {
		case byDir:
			// A blob directly in the root has no home but the root's.
			pt.Home = k.home
		case plainName(k.pkg):
			pt.Home = path.Join(k.root, k.pkg) + "/"
		}
		out = append(out, pt)
	}
	slices.SortFunc(out, func(a, b owners.PackageTouch) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Home, b.Home))
	})
	return out, nil
}

func blobsWhy(added, removed int, files []string) string {
	var parts []string
	if added > 0 {
		parts = append(parts, fmt.Sprintf("%d added", added))
	}
	if removed > 0 {
		parts = append(parts, fmt.Sprintf("%d removed", removed))
	}
	noun := "blob"
	if added+removed > 1 {
		noun = "blobs"
	}
	return fmt.Sprintf("%s %s in %s", noun, strings.Join(parts, ", "), strings.Join(files, ", "))
}

// rootOf returns the catalog root that holds p, the deepest if roots nest.
func rootOf(p string, roots []string) (string, bool) {
	best, found := "", false
	for _, r := range roots {
		if r == "." || strings.HasPrefix(p, r+"/") {
			if !found || len(r) > len(best) || best == "." {
				best, found = r, true
			}
		}
	}
	return best, found
}

// plainName says whether a package name can be a directory of its own
// directly below a root.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`) && fs.ValidPath(name)
}
