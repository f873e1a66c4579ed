package reconcile

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
)

// TestAppKeepsPackageIndex: the App keeps the package index of the bases
// it checks beside its git cache, so that after a restart a check reads
// only the package directories whose trees it has not indexed.
func TestAppKeepsPackageIndex(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")

	dir := filepath.Join(e.app.cache.Dir(), ".package-index")
	files, err := filepath.Glob(filepath.Join(dir, "*.idx"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no package index under %s (%v)", dir, err)
	}
	store, err := pkgindex.Open(dir, pkgindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		tree := strings.TrimSuffix(filepath.Base(f), ".idx")
		r, ok := store.Load(tree)
		if !ok {
			t.Fatalf("%s: not a package index the store trusts", f)
		}
		for _, en := range r.Entries {
			if en.Dir == "foo" && len(en.Packages) == 1 && en.Packages[0] == "foo" {
				return
			}
		}
	}
	t.Errorf("no index under %s says that foo holds package foo", dir)
}
