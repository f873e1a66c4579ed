package policy

import (
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func TestTargets(t *testing.T) {
	file := &fstest.MapFile{Data: []byte("x")}
	base := fstest.MapFS{
		"catalogs/v4.17/foo/catalog.yaml": file,
		"catalogs/v4.18/foo/catalog.yaml": file,
		"catalogs/.hidden/x":              file,
		"catalogs/README.md":              file,
		"catalog/bar/catalog.yaml":        file,
		"incubator/a/baz/catalog.yaml":    file,
	}
	head := fstest.MapFS{
		"catalogs/v4.18/foo/catalog.yaml": file,
		"catalogs/v4.19/foo/catalog.yaml": file,
		"catalog/bar/catalog.yaml":        file,
	}
	tests := []struct {
		name   string
		policy string
		trees  []fstest.MapFS
		want   []Target
		err    string
	}{
		{
			name:   "no catalogs list: one catalog of the roots, as before",
			policy: "catalog: {roots: [catalog, incubator]}\npublish: {image: quay.io/acme/index:latest}\n",
			trees:  []fstest.MapFS{base},
			want:   []Target{{Roots: []string{"catalog", "incubator"}, Image: "quay.io/acme/index:latest"}},
		},
		{
			name:   "each directory a catalog, named by it, from both sides",
			policy: "catalogs: [{each: catalogs/v4.*}]\npublish: {image: \"quay.io/acme/index:{catalog}\"}\n",
			trees:  []fstest.MapFS{base, head},
			want: []Target{
				{Name: "v4.17", Roots: []string{"catalogs/v4.17"}, Image: "quay.io/acme/index:v4.17"},
				{Name: "v4.18", Roots: []string{"catalogs/v4.18"}, Image: "quay.io/acme/index:v4.18"},
				{Name: "v4.19", Roots: []string{"catalogs/v4.19"}, Image: "quay.io/acme/index:v4.19"},
			},
		},
		{
			name:   "a pattern matches directories only, never dot directories",
			policy: "catalogs: [{each: catalogs/*}]\n",
			trees:  []fstest.MapFS{base},
			want: []Target{
				{Name: "v4.17", Roots: []string{"catalogs/v4.17"}},
				{Name: "v4.18", Roots: []string{"catalogs/v4.18"}},
			},
		},
		{
			name:   "one catalog of several roots and patterns; a root that matches nothing is left out",
			policy: "catalogs: [{name: main, roots: [catalog, incubator/*, gone], image: quay.io/acme/main:1}]\n",
			trees:  []fstest.MapFS{base},
			want:   []Target{{Name: "main", Roots: []string{"catalog", "incubator/a"}, Image: "quay.io/acme/main:1"}},
		},
		{
			name:   "a directory two catalogs claim",
			policy: "catalogs: [{each: catalogs/*}, {name: old, roots: [catalogs/v4.17]}]\n",
			trees:  []fstest.MapFS{base},
			err:    "directory catalogs/v4.17 is a root of catalog \"v4.17\" and of catalog \"old\"",
		},
		{
			name:   "a name given twice through a pattern",
			policy: "catalogs: [{each: catalogs/*}, {name: v4.18, roots: [catalog]}]\n",
			trees:  []fstest.MapFS{base},
			err:    `two catalogs are named "v4.18"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol, findings := Parse(FileName, []byte(tt.policy))
			if len(findings) > 0 {
				t.Fatalf("policy: %v", findings)
			}
			var trees []fs.FS
			for _, tr := range tt.trees {
				trees = append(trees, tr)
			}
			got, err := pol.Targets(trees...)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Targets: %v, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Targets:\n got %+v\nwant %+v", got, tt.want)
			}
			resolved, _, err := pol.Resolved(trees...)
			if err != nil {
				t.Fatal(err)
			}
			var roots []string
			for _, tg := range tt.want {
				roots = append(roots, tg.Roots...)
			}
			if len(pol.CatalogSets) > 0 && !reflect.DeepEqual(resolved.Catalog.Roots, roots) {
				t.Errorf("Resolved roots %q; want %q", resolved.Catalog.Roots, roots)
			}
		})
	}
}
