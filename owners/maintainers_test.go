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
