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
			name:   "a directory whose name is no tag would break every publish of its catalog",
			policy: "catalogs: [{each: catalogs/*}]\npublish: {image: \"quay.io/acme/index:{catalog}\"}\n",
			trees:  []fstest.MapFS{{"catalogs/v4.20:evil/foo/catalog.yaml": file}},
			err:    `.catalogbot.yaml:1: catalogs[0].each matches directory catalogs/v4.20:evil, and "v4.20:evil" is no catalog name`,
		},
		{
			name:   "a directory named like a digest",
			policy: "catalogs: [{each: catalogs/*}]\npublish: {image: \"quay.io/acme/index:{catalog}\"}\n",
			trees:  []fstest.MapFS{{"catalogs/v4.20@sha256:0123/foo/catalog.yaml": file}},
			err:    `"v4.20@sha256:0123" is no catalog name`,
		},
		{
			name:   "a directory whose name starts with a dash",
			policy: "catalogs: [{each: \"catalogs/-*\"}]\n",
			trees:  []fstest.MapFS{{"catalogs/-v4/foo/catalog.yaml": file}},
			err:    `"-v4" is no catalog name`,
		},
		{
			name:   "several catalogs of one target: the last would win",
			policy: "catalogs:\n  - each: catalogs/v4.*\npublish: {image: quay.io/acme/index:latest}\n",
			trees:  []fstest.MapFS{base},
			err:    `.catalogbot.yaml:2: catalogs "v4.17" and "v4.18" both publish to quay.io/acme/index:latest`,
		},
		{
			name:   "one target written two ways",
			policy: "catalogs:\n  - {name: a, roots: [catalog], image: quay.io/acme/index}\n  - {name: b, roots: [incubator/*], image: \"quay.io/acme/index:latest\"}\n",
			trees:  []fstest.MapFS{base},
			err:    `.catalogbot.yaml:3: catalogs "a" and "b" both publish to`,
		},
		{
			name:   "an OCI layout per catalog",
			policy: "catalogs: [{each: catalogs/v4.*}]\npublish: {image: \"oci:out/{catalog}\"}\n",
			trees:  []fstest.MapFS{base},
			want: []Target{
				{Name: "v4.17", Roots: []string{"catalogs/v4.17"}, Image: "oci:out/v4.17"},
				{Name: "v4.18", Roots: []string{"catalogs/v4.18"}, Image: "oci:out/v4.18"},
			},
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

// TestTargetsFinding: an error of the catalogs found against a tree is a
// finding at the line of the catalogs entry, as a parse error is.
func TestTargetsFinding(t *testing.T) {
	pol, findings := Parse(FileName, []byte("publish: {image: quay.io/acme/index:latest}\ncatalogs:\n  - name: a\n    roots: [a]\n  - each: \"c/*\"\n"))
	if len(findings) > 0 {
		t.Fatal(findings)
	}
	_, err := pol.Targets(fstest.MapFS{"a/x": {}, "c/v1/x": {}})
	f := TargetsFinding(err)
	if f.File != FileName || f.Line != 5 || !strings.HasPrefix(f.Message, `catalogs "a" and "v1" both publish to quay.io/acme/index:latest`) {
		t.Errorf("finding = %+v", f)
	}
}
