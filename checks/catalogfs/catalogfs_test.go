package catalogfs

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func tree() fstest.MapFS {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		".catalogbot.yaml":              file("catalog: {}\n"),
		".github/workflows/x.yaml":      file("on: push\n"),
		"README.md":                     file("hi\n"),
		"catalog/bar/catalog.yaml":      file("bob's bar\n"),
		"catalog/foo/catalog.yaml":      file("foo\n"),
		"incubator/bar/catalog.yaml":    file("someone else's bar\n"),
		"incubator/bar/.indexignore":    file("*\n"),
		"catalogs/v4.17/baz/index.json": file("{}\n"),
		"catalogs/v4.18/baz/index.json": file("{}\n"),
		"catalogs/README":               file("not a catalog\n"),
	}
}

func TestFiles(t *testing.T) {
	tests := []struct {
		name  string
		roots []string
		want  []string
		err   string
	}{
		{name: "one root is the directory itself", roots: []string{"catalog"},
			want: []string{"bar/catalog.yaml", "foo/catalog.yaml"}},
		{name: "several roots keep their paths, so none overlays another", roots: []string{"incubator", "catalog"},
			want: []string{"catalog/bar/catalog.yaml", "catalog/foo/catalog.yaml", "incubator/bar/.indexignore", "incubator/bar/catalog.yaml"}},
		{name: "nested roots under a shared parent", roots: []string{"catalogs/v4.17", "catalogs/v4.18"},
			want: []string{"catalogs/v4.17/baz/index.json", "catalogs/v4.18/baz/index.json"}},
		{name: "a missing root is left out", roots: []string{"catalog", "gone"},
			want: []string{"bar/catalog.yaml", "foo/catalog.yaml"}},
		{name: "the whole repository less its dot files", roots: []string{"."},
			want: []string{"README.md", "catalog/bar/catalog.yaml", "catalog/foo/catalog.yaml", "catalogs/README", "catalogs/v4.17/baz/index.json", "catalogs/v4.18/baz/index.json", "incubator/bar/.indexignore", "incubator/bar/catalog.yaml"}},
		{name: "no root exists", roots: []string{"gone"}, err: "no catalog root"},
		{name: "a root inside another", roots: []string{"catalogs", "catalogs/v4.17"}, err: `"catalogs/v4.17" lies inside catalog root "catalogs"`},
		{name: "a root outside the tree", roots: []string{"../x"}, err: "not a path inside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tree(), tt.roots)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("New: %v; want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := Files(c)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Files:\n got %q\nwant %q", got, tt.want)
			}
			// The catalog is a well-behaved fs.FS: every listed file opens
			// and reads, directories list consistently, and nothing else
			// can be opened.
			if err := fstest.TestFS(c, tt.want...); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestNothingOutsideTheRoots(t *testing.T) {
	c, err := New(tree(), []string{"catalogs/v4.17", "catalog"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".catalogbot.yaml", "README.md", "incubator/bar/catalog.yaml", "catalogs/README", "catalogs/v4.18/baz/index.json", "catalogs/v4.18"} {
		if _, err := fs.Stat(c, name); err == nil {
			t.Errorf("%s is visible outside the roots", name)
		}
		if _, err := fs.ReadFile(c, name); err == nil {
			t.Errorf("%s reads outside the roots", name)
		}
	}
	es, err := fs.ReadDir(c, "catalogs")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name() != "v4.17" {
		t.Errorf("catalogs/ lists %v; want only v4.17", es)
	}
}
