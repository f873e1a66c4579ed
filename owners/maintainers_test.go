package owners

import (
	"slices"
	"testing"
	"testing/fstest"
)

// TestMaintainers: operator-pipelines' maintainers approve every path of a
// repository whose packages' ci.yaml files name the other approvers, and
// stand beside a root OWNERS file where there is one.
func TestMaintainers(t *testing.T) {
	m := &Maintainers{File: "config.yaml", Line: 3, Logins: []string{"Allda", "@ezopezo"}}
	tree := fstest.MapFS{
		"config.yaml":              {Data: []byte("maintainers: [Allda, ezopezo]\n")},
		"operators/foo/ci.yaml":    {Data: []byte("reviewers: [alice]\n")},
		"catalogs/v4.17/foo/x.yml": {Data: []byte("x")},
	}
	tests := []struct {
		name    string
		sources []string
		extra   fstest.MapFS
		path    string
		want    []string
		file    string
	}{
		{name: "a root file, ci.yaml only", sources: []string{SourceCIYAML}, path: "config.yaml",
			want: []string{"allda", "ezopezo"}, file: "config.yaml"},
		{name: "a package's catalog, ci.yaml only", sources: []string{SourceCIYAML}, path: "catalogs/v4.17/foo/x.yml",
			want: []string{"alice", "allda", "ezopezo"}, file: "operators/foo/ci.yaml"},
		{name: "beside a root OWNERS file", sources: []string{SourceOwners, SourceCIYAML}, path: "README.md",
			extra: fstest.MapFS{"OWNERS": {Data: []byte("approvers: [root-admin]\n")}},
			want:  []string{"allda", "ezopezo", "root-admin"}, file: "OWNERS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for k, v := range tree {
				fsys[k] = v
			}
			for k, v := range tt.extra {
				fsys[k] = v
			}
			r, err := Load(fsys, LoadOptions{Sources: tt.sources, CatalogRoots: []string{"catalogs/v4.17"}, Maintainers: m})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Resolve(tt.path)
			if !slices.Equal(res.Approvers, tt.want) || res.ApproverOwnersFile != tt.file {
				t.Errorf("approvers %v from %s; want %v from %s", res.Approvers, res.ApproverOwnersFile, tt.want, tt.file)
			}
			without, err := Load(fsys, LoadOptions{Sources: tt.sources, CatalogRoots: []string{"catalogs/v4.17"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := without.Resolve(tt.path).Approvers; slices.Contains(got, "allda") {
				t.Errorf("without maintainers, %v approve %s", got, tt.path)
			}
		})
	}
}

// TestDescribeAll: a package touched alike in several homes, one per
// catalog, is one line; a home with another verdict keeps its own.
func TestDescribeAll(t *testing.T) {
	ps := []PackageState{
		{PackageTouch: PackageTouch{Name: "sail", Home: "catalogs/v4.17/sail/", Why: "1 blob added in …", Added: 1}, Approved: true, ApprovedBy: []string{"alice"}},
		{PackageTouch: PackageTouch{Name: "sail", Home: "catalogs/v4.18/sail/", Why: "1 blob added in …", Added: 1}, Approved: true, ApprovedBy: []string{"alice"}},
		{PackageTouch: PackageTouch{Name: "sail", Home: "catalogs/v4.19/sail/", Why: "2 blobs added in …", Added: 2}, Approved: true, ApprovedBy: []string{"alice"}},
		{PackageTouch: PackageTouch{Name: "sail", Home: "catalogs/v4.20/sail/", Why: "1 blob added in …", Added: 1}, Approvers: []string{"bob"}},
		{PackageTouch: PackageTouch{Name: "quay", Home: "catalogs/v4.17/quay/", Why: "1 blob removed in …", Removed: 1}, Approved: true, ApprovedBy: []string{"carol"}},
	}
	got := DescribeAll(ps)
	want := []string{
		"package sail in 3 homes, catalogs/v4.17/sail/ to catalogs/v4.19/sail/ (blobs 4 added in all): approved by alice",
		"package sail (home catalogs/v4.20/sail/; 1 blob added in …): needs bob",
		"package quay (home catalogs/v4.17/quay/; 1 blob removed in …): approved by carol",
	}
	if !slices.Equal(got, want) {
		t.Errorf("DescribeAll:\n got %q\nwant %q", got, want)
	}
}
