package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/catalogbot/catalogbot/publisher/render"
)

// The layouts are generated on every demo run instead of being committed,
// so the same input must give the same digests, and a revision new ones.
func TestGenerateDeterministic(t *testing.T) {
	from := filepath.Join("..", "..", "..", "testdata", "catalogs", "valid")
	digests := func(rev int) map[string]string {
		t.Helper()
		out := t.TempDir()
		if err := generate(from, out, "v1", rev); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, e := range entries {
			d, err := render.LayoutDigest(filepath.Join(out, e.Name()) + ":v1")
			if err != nil {
				t.Fatal(err)
			}
			m[e.Name()] = d.String()
		}
		return m
	}
	a, b, c := digests(0), digests(0), digests(2)
	if len(a) != 2 {
		t.Fatalf("generated %v, want the 2 packages", a)
	}
	for pkg, d := range a {
		if b[pkg] != d {
			t.Errorf("%s: %s then %s; want the same digest", pkg, d, b[pkg])
		}
		if c[pkg] == d {
			t.Errorf("%s: revision 2 kept digest %s", pkg, d)
		}
	}
}
