package pkgindex

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const (
	rootA = "1111111111111111111111111111111111111111"
	rootB = "2222222222222222222222222222222222222222"
	treeX = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	treeY = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func sample(tree string) *Root {
	return &Root{Tree: tree, Salt: "0123abcd", Entries: []Entry{
		{Dir: "konflux", Tree: treeY, Packages: []string{"konflux-operator"}},
		{Dir: "empty", Tree: treeX, Packages: []string{}},
		{Dir: "tab\tname", Tree: treeX, Packages: []string{"x"}},
		{Dir: "shared", Tree: treeX, Packages: []string{"a", "b"}},
	}}
}

// TestFormat: the file as written, against testdata/root.golden; a name
// a line cannot hold is left out, and entries come sorted.
func TestFormat(t *testing.T) {
	got := encode(sample(rootA))
	golden(t, "encode", "root.golden", got)
	r, err := decode(got)
	if err != nil {
		t.Fatal(err)
	}
	if names, ok := r.Lookup("0123abcd", "shared", treeX); !ok || !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("Lookup(shared) = %v, %v", names, ok)
	}
	for _, miss := range []struct{ salt, dir, tree string }{
		{"0123abcd", "shared", treeY},    // another tree of the directory
		{"ffffffff", "shared", treeX},    // another .indexignore
		{"0123abcd", "tab\tname", treeX}, // never written
		{"0123abcd", "absent", treeX},
	} {
		if names, ok := r.Lookup(miss.salt, miss.dir, miss.tree); ok {
			t.Errorf("Lookup(%q, %q, %q) = %v, want no entry", miss.salt, miss.dir, miss.tree, names)
		}
	}
}

// TestDecodeRefuses: every file that is not one this version wrote whole
// is refused, so its entries are computed again.
func TestDecodeRefuses(t *testing.T) {
	good := string(encode(sample(rootA)))
	resum := withSum
	tests := []struct{ name, data string }{
		{"empty", ""},
		{"truncated", good[:len(good)-20]},
		{"no final newline", strings.TrimSuffix(good, "\n")},
		{"a byte changed", strings.Replace(good, "konflux-operator", "konflux-operatoR", 1)},
		{"another version", resum(strings.Replace(body(good), "index 1", "index 2", 1))},
		{"entries out of order", resum(strings.Replace(body(good), "dir\tempty", "dir\tzzz", 1))},
		{"a tree id that is not one", resum(strings.Replace(body(good), treeY, "not-a-tree", 1))},
		{"an unknown record", resum(body(good) + "extra\tline\n")},
		{"no root", resum(strings.Replace(body(good), "root\t"+rootA+"\n", "", 1))},
	}
	for _, tt := range tests {
		if r, err := decode([]byte(tt.data)); err == nil {
			t.Errorf("%s: decoded as %+v", tt.name, r)
		}
	}
}

func body(file string) string {
	b, _, _ := cutLastLine([]byte(file))
	return string(b)
}

func withSum(body string) string {
	r := []byte(body)
	// The sum of the body as encode writes it.
	sum := encodeSum(r)
	return body + "sha256\t" + sum + "\n"
}

// TestStore: Load returns only a file that names the tree asked for,
// Nearest the one saved last for the scope, and past MaxFiles the least
// recently used files go.
func TestStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxFiles: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Load(rootA); ok {
		t.Fatal("an empty store loaded an index")
	}
	if err := s.Save("catalogs/v4.20", sample(rootA)); err != nil {
		t.Fatal(err)
	}
	if r, ok := s.Load(rootA); !ok || r.Tree != rootA || len(r.Entries) != 3 {
		t.Fatalf("Load(A) = %+v, %v", r, ok)
	}
	if r, ok := s.Nearest("catalogs/v4.20"); !ok || r.Tree != rootA {
		t.Fatalf("Nearest = %+v, %v", r, ok)
	}
	if _, ok := s.Nearest("catalogs/v4.21"); ok {
		t.Fatal("Nearest of another scope found an index")
	}
	// A's file copied under B's name claims A: never B's.
	data, err := os.ReadFile(filepath.Join(dir, rootA+".idx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rootB+".idx"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if r, ok := s.Load(rootB); ok {
		t.Fatalf("Load(B) trusted a file that claims %s", r.Tree)
	}
	if _, ok := s.Load("../" + rootA); ok {
		t.Fatal("Load took a name that is not a tree id")
	}

	// LRU: A used last, so C's save removes B.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, rootA+".idx"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, rootB+".idx"), old.Add(-time.Minute), old.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.Load(rootA)
	rootC := strings.Repeat("3", 40)
	if err := s.Save("catalogs/v4.20", sample(rootC)); err != nil {
		t.Fatal(err)
	}
	for tree, want := range map[string]bool{rootA: true, rootB: false, rootC: true} {
		if s.Has(tree) != want {
			t.Errorf("after the bound: Has(%s) = %v, want %v", tree[:4], !want, want)
		}
	}
	if r, ok := s.Nearest("catalogs/v4.20"); !ok || r.Tree != rootC {
		t.Errorf("Nearest after C = %+v, %v", r, ok)
	}
	// No temporary file left behind.
	files, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if len(files) > 0 {
		t.Errorf("temporary files left: %v", files)
	}
}

// golden compares got, what what made, with testdata/name, which -update
// rewrites.
func golden(t *testing.T, what, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s:\n%s\nwant (testdata/%s, -update rewrites it):\n%s", what, got, name, want)
	}
}
