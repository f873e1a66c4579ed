package pipeline

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
)

// TestPackageIndexCache: what a directory of the base holds is read once
// per tree, and a directory whose tree changed is read again, so a
// package moved into it on the base is not missed.
func TestPackageIndexCache(t *testing.T) {
	r, base1, head1, base2, head2 := indexHistory(t)

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

// TestPackageIndexOnDisk: with a store, a fresh process (the memory cache
// empty) reads only the directories whose trees no saved index knows, and
// an index file that is damaged, or that claims another tree than the one
// asked for, is never trusted: its directories are read again.
func TestPackageIndexOnDisk(t *testing.T) {
	r, base1, head1, base2, head2 := indexHistory(t)

	store, err := pkgindex.Open(t.TempDir(), pkgindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rootTree := func(rev string) string {
		t.Helper()
		_, b, _, err := change.FromGit(r.Dir, rev, rev)
		if err != nil {
			t.Fatal(err)
		}
		info, err := fs.Stat(b, "catalog")
		if err != nil {
			t.Fatal(err)
		}
		id, _ := change.ObjectID(info)
		return id
	}
	file := func(rev string) string { return filepath.Join(store.Dir(), rootTree(rev)+".idx") }
	damage := func(rev string) func() {
		return func() {
			data, err := os.ReadFile(file(rev))
			if err != nil {
				t.Fatal(err)
			}
			// qux said to hold quux rather than baz, the sum left as it was.
			forged := strings.Replace(string(data), "\tbaz\n", "\tquux\n", 1)
			if forged == string(data) {
				t.Fatalf("no entry to forge in\n%s", data)
			}
			if err := os.WriteFile(file(rev), []byte(forged), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	misclaim := func() {
		// base1's index, whole and sound, saved under base2's tree.
		data, err := os.ReadFile(file(base1))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file(base2), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	steps := []struct {
		name       string
		before     func()
		base, head string
		want       checks.Conclusion
		reads      int
	}{
		{"an empty store: every directory is read", nil, base1, head1, checks.Success, 2},
		{"the same base in a fresh process reads none", nil, base1, head1, checks.Success, 0},
		{"a new base is derived from the last: only the changed directory", nil, base2, head2, checks.Failure, 1},
		{"a damaged file is not trusted", damage(base2), base2, head2, checks.Failure, 2},
		{"a file that claims another tree is not trusted", misclaim, base2, head2, checks.Failure, 2},
		{"the index saved again is used", nil, base2, head2, checks.Failure, 0},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		dirNamesCache.reset()
		c, b, h, err := change.FromGit(r.Dir, st.base, st.head)
		if err != nil {
			t.Fatal(err)
		}
		before := dirNamesCache.reads
		res := FBC{}.Run(context.Background(), &Input{Change: c, Base: b, Head: h, Policy: policy.Default(), Index: store})
		if reads := dirNamesCache.reads - before; res.Conclusion != st.want || reads != st.reads {
			t.Errorf("%s: %s with %d directories read, want %s with %d\n%s\n%+v", st.name, res.Conclusion, reads, st.want, st.reads, res.Summary, res.Findings)
		}
	}
}

// indexHistory empties the process's package index and makes two changes:
// base1 -> head1 adds package bar, and base2, a base where directory qux
// came to hold package baz, -> head2 adds baz in its own directory.
func indexHistory(t *testing.T) (r *changetest.Repo, base1, head1, base2, head2 string) {
	t.Helper()
	dirNamesCache.reset()
	t.Cleanup(dirNamesCache.reset)
	pkg := func(name string) string { return strings.ReplaceAll(fooCatalog, "foo", name) }
	r = changetest.NewRepo(t)
	base1 = r.Commit("base", map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/qux/catalog.yaml": pkg("quux")})
	r.Branch("pr1", base1)
	head1 = r.Commit("add bar", map[string]string{"catalog/bar/catalog.yaml": pkg("bar")})
	r.Branch("main2", base1)
	base2 = r.Commit("qux holds baz", map[string]string{"catalog/qux/catalog.yaml": pkg("baz")})
	r.Branch("pr2", base2)
	head2 = r.Commit("baz at home", map[string]string{"catalog/baz/catalog.yaml": pkg("baz")})
	return r, base1, head1, base2, head2
}
