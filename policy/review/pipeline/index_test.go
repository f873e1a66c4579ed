package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/policy"
)

// TestPackageIndexCache: what a directory of the base holds is read once
// per tree, and a directory whose tree changed is read again, so a
// package moved into it on the base is not missed.
func TestPackageIndexCache(t *testing.T) {
	dirNamesCache.reset()
	t.Cleanup(dirNamesCache.reset)
	pkg := func(name string) string { return strings.ReplaceAll(fooCatalog, "foo", name) }
	r := changetest.NewRepo(t)
	base1 := r.Commit("base", map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/qux/catalog.yaml": pkg("quux")})
	r.Branch("pr1", base1)
	head1 := r.Commit("add bar", map[string]string{"catalog/bar/catalog.yaml": pkg("bar")})
	r.Branch("main2", base1)
	base2 := r.Commit("qux holds baz", map[string]string{"catalog/qux/catalog.yaml": pkg("baz")})
	r.Branch("pr2", base2)
	head2 := r.Commit("baz at home", map[string]string{"catalog/baz/catalog.yaml": pkg("baz")})

	run := func(base, head string) (checks.Result, int) {
		t.Helper()
		c, b, h, err := change.FromGit(r.Dir, base, head)
		if err != nil {
			t.Fatal(err)
		}
		before := dirNamesCache.misses
		res := FBC{}.Run(context.Background(), &Input{Change: c, Base: b, Head: h, Policy: policy.Default()})
		return res, dirNamesCache.misses - before
	}
	steps := []struct {
		name       string
		base, head string
		want       checks.Conclusion
		misses     int
	}{
		{"the first change reads every directory", base1, head1, checks.Success, 2},
		{"the same base again reads none", base1, head1, checks.Success, 0},
		{"a directory whose tree changed is read again", base2, head2, checks.Failure, 1},
	}
	for _, st := range steps {
		res, misses := run(st.base, st.head)
		if res.Conclusion != st.want || misses != st.misses {
			t.Errorf("%s: %s with %d directories read, want %s with %d\n%s\n%+v", st.name, res.Conclusion, misses, st.want, st.misses, res.Summary, res.Findings)
		}
	}
}
