package publish_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/catalogbot/catalogbot/"

// imports lists the module packages the non-test Go files of the package
// in dir (relative to the module root) import.
func imports(t *testing.T, root, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(p, module); ok && !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
	}
	return out
}

// deps is every module package dir depends on, transitively.
func deps(t *testing.T, root, dir string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(d string) {
		for _, p := range imports(t, root, d) {
			if !seen[p] {
				seen[p] = true
				walk(p)
			}
		}
	}
	walk(dir)
	return seen
}

// TestLayers keeps the publisher a layer below the front ends: no
// publisher package depends on the policy, OWNERS, the review core, the
// App or the image check (registries are reached through
// checks/registry), and checks/registry is a leaf that imports nothing of
// the module but checks.
func TestLayers(t *testing.T) {
	root := filepath.Join("..", "..")
	forbidden := []string{"policy", "owners", "webhook", "checks/review", "checks/images", "checks/pipeline"}
	var dirs []string
	err := filepath.WalkDir(filepath.Join(root, "publisher"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, p)
		dirs = append(dirs, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		for p := range deps(t, root, dir) {
			for _, f := range forbidden {
				if p == f || strings.HasPrefix(p, f+"/") {
					t.Errorf("%s depends on %s", dir, p)
				}
			}
		}
	}
	for p := range deps(t, root, "checks/registry") {
		if p != "checks" {
			t.Errorf("checks/registry, a leaf, depends on %s", p)
		}
	}
}
