package owners

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/change"
)

// TestPackageIdentity: under the directories layout a package's name, not
// the directory it is put in, says whose it is. The reviewers of foo own
// catalogs/*/foo/, but a package bar they put there is still bar's
// operator's, and a directory that holds a package of another name for
// the first time, or a package the repository has never seen, is the
// maintainers' to accept.
func TestPackageIdentity(t *testing.T) {
	tree := fstest.MapFS{
		"config.yaml":                     {Data: []byte("maintainers: [boss]\n")},
		"operators/foo/ci.yaml":           {Data: []byte("reviewers: [alice]\n")},
		"operators/bar/ci.yaml":           {Data: []byte("reviewers: [bob]\n")},
		"operators/konflux/ci.yaml":       {Data: []byte("reviewers: [kim]\n")},
		"catalogs/v4.19/bar/catalog.yaml": {Data: []byte("x")},
	}
	m := &Maintainers{File: "config.yaml", Line: 1, Logins: []string{"boss"}}
	roots := []string{"catalogs/v4.19", "catalogs/v4.20", "catalogs/v4.21"}
	tests := []struct {
		name     string
		author   string
		touch    PackageTouch
		approve  []string
		approved bool
		// unapproved are the required files still waiting.
		unapproved []string
		// describe is a part of the package's line.
		describe string
	}{
		{
			name:       "foo's reviewer ships bar in foo's directory",
			author:     "alice",
			touch:      PackageTouch{Name: "bar", Home: "catalogs/v4.21/foo/", Added: 1, ByName: true, Holders: []string{"catalogs/v4.19/bar/"}},
			unapproved: []string{"config.yaml", "operators/bar/ci.yaml"},
			describe:   "also package bar is its operator's, operators/bar/ci.yaml, in every catalog: needs bob or boss (operators/bar/ci.yaml reviewers: bob)",
		},
		{
			name:   "foo's directory holding bar, with bar's reviewer and a maintainer",
			author: "alice", approve: []string{"bob", "boss"},
			touch:    PackageTouch{Name: "bar", Home: "catalogs/v4.21/foo/", Added: 1, ByName: true, Holders: []string{"catalogs/v4.19/bar/"}},
			approved: true,
		},
		{
			name:     "bar's own reviewer adds bar to another catalog",
			author:   "bob",
			touch:    PackageTouch{Name: "bar", Home: "catalogs/v4.21/bar/", Added: 1, ByName: true, Holders: []string{"catalogs/v4.19/bar/"}},
			approved: true,
			describe: "package bar (home catalogs/v4.21/bar/; ): approved by bob (operators/bar/ci.yaml reviewers: bob)",
		},
		{
			name:     "a renamed package where the base already keeps it under that name",
			author:   "kim",
			touch:    PackageTouch{Name: "konflux-operator", Home: "catalogs/v4.21/konflux/", Added: 1, ByName: true, Holders: []string{"catalogs/v4.20/konflux/"}},
			approved: true,
		},
		{
			name:       "a directory holds a package of another name the first time",
			author:     "kim",
			touch:      PackageTouch{Name: "konflux-operator", Home: "catalogs/v4.21/konflux/", Added: 1, ByName: true},
			unapproved: []string{"config.yaml"},
			describe:   "directory konflux holds package konflux-operator, and no directory of that name holds it on the base",
		},
		{
			name:       "a package new to the repository needs the maintainers",
			author:     "alice",
			touch:      PackageTouch{Name: "baz", Home: "catalogs/v4.21/baz/", Added: 1, ByName: true},
			unapproved: []string{"config.yaml"},
			describe:   "package baz is new to the repository",
		},
		{
			name:     "without ByName the home alone decides, as before",
			author:   "alice",
			touch:    PackageTouch{Name: "bar", Home: "catalogs/v4.21/foo/", Added: 1},
			approved: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Load(tree, LoadOptions{Sources: []string{SourceCIYAML}, CatalogRoots: roots, Maintainers: m})
			if err != nil {
				t.Fatal(err)
			}
			file := strings.TrimSuffix(tt.touch.Home, "/") + "/catalog.yaml"
			tt.touch.Files = []string{file}
			c := &change.Change{Number: 1, Author: tt.author, HeadSHA: "h", Files: []change.File{{Path: file, Status: change.Added}}}
			var approvals []Approval
			for _, a := range tt.approve {
				approvals = append(approvals, Approval{User: a, SHA: "h"})
			}
			st := r.Evaluate(Input{Change: c, Approvals: approvals, Packages: []PackageTouch{tt.touch}})
			if st.Approved != tt.approved {
				t.Errorf("approved = %v, want %v: %s\n%s", st.Approved, tt.approved, st.Reason, st.Explain())
			}
			if tt.unapproved != nil && !slices.Equal(st.Unapproved, tt.unapproved) {
				t.Errorf("unapproved %q, want %q", st.Unapproved, tt.unapproved)
			}
			if len(st.Packages) != 1 {
				t.Fatalf("%d packages", len(st.Packages))
			}
			if got := st.Packages[0].Describe(); !strings.Contains(got, tt.describe) {
				t.Errorf("package line %q does not say %q", got, tt.describe)
			}
		})
	}
}

// TestCatalogChanges: a catalog a change adds or removes is a published
// image that appears or goes; only the root approvers decide that, though
// the package reviewers approve every file in it.
func TestCatalogChanges(t *testing.T) {
	tree := fstest.MapFS{
		"config.yaml":           {Data: []byte("maintainers: [boss]\n")},
		"operators/foo/ci.yaml": {Data: []byte("reviewers: [alice]\n")},
	}
	m := &Maintainers{File: "config.yaml", Line: 1, Logins: []string{"boss"}}
	r, err := Load(tree, LoadOptions{Sources: []string{SourceCIYAML}, CatalogRoots: []string{"catalogs/v4.23"}, Maintainers: m})
	if err != nil {
		t.Fatal(err)
	}
	const file = "catalogs/v4.23/foo/catalog.yaml"
	c := &change.Change{Number: 1, Author: "alice", HeadSHA: "h", Files: []change.File{{Path: file, Status: change.Added}}}
	for _, tc := range []struct {
		name    string
		cats    []CatalogChange
		approve []string
		want    bool
	}{
		{name: "no new catalog", want: true},
		{name: "a new catalog without a maintainer", cats: []CatalogChange{{Name: "v4.23", Roots: []string{"catalogs/v4.23"}, Added: true, Files: []string{file}}}},
		{name: "a new catalog with a maintainer", cats: []CatalogChange{{Name: "v4.23", Roots: []string{"catalogs/v4.23"}, Added: true, Files: []string{file}}}, approve: []string{"boss"}, want: true},
		{name: "a removed catalog without a maintainer", cats: []CatalogChange{{Name: "v4.23", Roots: []string{"catalogs/v4.23"}, Files: []string{file}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var approvals []Approval
			for _, a := range tc.approve {
				approvals = append(approvals, Approval{User: a, SHA: "h"})
			}
			st := r.Evaluate(Input{Change: c, Approvals: approvals, Catalogs: tc.cats})
			if st.Approved != tc.want {
				t.Errorf("approved = %v, want %v: %s\n%s", st.Approved, tc.want, st.Reason, st.Explain())
			}
			if !tc.want && !slices.Equal(st.Unapproved, []string{"config.yaml"}) {
				t.Errorf("unapproved %q, want the maintainers' config.yaml", st.Unapproved)
			}
		})
	}
}
