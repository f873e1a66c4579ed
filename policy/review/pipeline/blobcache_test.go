package pipeline

import (
	"reflect"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
)

// TestFileBlobsCache attributes the same change twice, and the same files
// under other paths: the answer is the same each time, and each content
// (git blob id) is decoded once.
func TestFileBlobsCache(t *testing.T) {
	pkg := func(name string) string { return strings.ReplaceAll(fooCatalog, "foo", name) }
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{"catalog/foo/catalog.yaml": fooCatalog})
	head := r.Commit("add bar", map[string]string{
		"catalog/bar/catalog.yaml":  pkg("bar"),
		"catalog/foo/catalog.yaml":  pkg("foo") + "---\n" + pkg("baz"),
		"catalog/bar2/catalog.yaml": pkg("bar"), // the same blob as bar's
	})
	c, b, h, err := change.FromGit(r.Dir, base, head)
	if err != nil {
		t.Fatal(err)
	}
	roots := []string{"catalog"}
	before := blobsCache.misses
	first, err := TouchedPackages(c, b, h, roots, "")
	if err != nil {
		t.Fatal(err)
	}
	// foo's base and head versions and bar's content: three blob ids for
	// four reads.
	if got := blobsCache.misses - before; got != 3 {
		t.Errorf("first attribution decoded %d files, want 3", got)
	}
	before = blobsCache.misses
	second, err := TouchedPackages(c, b, h, roots, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := blobsCache.misses - before; got != 0 {
		t.Errorf("second attribution decoded %d files, want 0", got)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("the cached answer differs:\n%+v\n%+v", first, second)
	}
	if len(first) != 2 {
		t.Errorf("touched packages: %+v, want bar and baz (foo's own blobs are unchanged)", first)
	}
}
