package policy

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
)

func isCIYAML(name string) bool { return strings.HasSuffix(name, "/"+owners.CIYAMLFile) }

// operatorsFiles are copFS's files with a ci.yaml whose catalog mapping
// is broken (a note) and one whose reviewers are (an owners finding).
func operatorsFiles(t *testing.T) fstest.MapFS {
	fsys := copFS(t, "conventions: operator-pipelines\n")
	fsys["operators/broken/ci.yaml"] = &fstest.MapFile{Data: []byte("fbc:\n  enabled: true\n  catalog_mapping: nope\n")}
	fsys["operators/noreviewers/ci.yaml"] = &fstest.MapFile{Data: []byte("reviewers: yes\n---\nmore: 1\n")}
	return fsys
}

// gitOf commits the files of fsys to a new repository.
func gitOf(t *testing.T, fsys fstest.MapFS) fs.FS {
	t.Helper()
	files := map[string]string{}
	for name, f := range fsys {
		files[name] = string(f.Data)
	}
	r := changetest.NewRepo(t)
	tree, err := change.TreeFS(r.Git, r.Commit("base", files))
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// derived is what Load derives from the ci.yaml files, as the checks see
// it.
func derived(t *testing.T, fsys fs.FS, o LoadOptions) (string, *owners.Operators) {
	t.Helper()
	pol, findings, err := LoadFrom(fsys, o)
	if err != nil || len(findings) > 0 {
		t.Fatalf("Load: %v %v", err, findings)
	}
	b, err := json.MarshalIndent(map[string]any{"templates": pol.Catalog.Templates, "notes": pol.Notes}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b), pol.Operators
}

// TestOperatorsKept: the templates, the notes and the ci.yaml files as
// the owners check takes them are the same read from a tree that is not
// git (nothing kept), read from git, kept in the process, and kept on
// disk for the next process; kept, they are read from no ci.yaml.
// A record on disk that is damaged, or that claims another tree, is not
// taken.
func TestOperatorsKept(t *testing.T) {
	t.Cleanup(operatorsKept.reset)
	files := operatorsFiles(t)
	operatorsKept.reset()
	want, plain := derived(t, files, LoadOptions{})
	if plain == nil || plain.Tree != "" || len(plain.Files) != 5 {
		t.Fatalf("read from a map, the ci.yaml files are %+v", plain)
	}
	if !strings.Contains(want, "operators/broken/ci.yaml") || !strings.Contains(want, "catalogs/v4.20/konflux") {
		t.Fatalf("the test tree maps no template or has no note:\n%s", want)
	}

	tree := &changetest.CountingFS{FS: gitOf(t, files), Match: isCIYAML}
	store, err := pkgindex.Open(t.TempDir(), pkgindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := LoadOptions{Records: store}
	check := func(what string, reads int64) *owners.Operators {
		t.Helper()
		tree.Reset()
		got, ops := derived(t, tree, o)
		if got != want {
			t.Errorf("%s: Load derives\n%s\nwant\n%s", what, got, want)
		}
		if ops == nil || ops.Tree == "" || !reflect.DeepEqual(withoutDirs(ops.Files), plain.Files) {
			t.Errorf("%s: the ci.yaml files for the owners check are %+v, want %+v", what, ops, plain)
		}
		if n := tree.Reads(); n != reads {
			t.Errorf("%s: %d ci.yaml files read, want %d", what, n, reads)
		}
		return ops
	}
	first := check("read from git", 5)
	if second := check("kept in the process", 0); second != first {
		t.Error("the second Load of a tree made its own record")
	}
	operatorsKept.reset()
	check("kept on disk", 0)

	recordFile := filepath.Join(store.Dir(), first.Tree+".operators.rec")
	data, err := os.ReadFile(recordFile)
	if err != nil {
		t.Fatal(err)
	}
	// Damaged: the record says another reviewer.
	operatorsKept.reset()
	if err := os.WriteFile(recordFile, []byte(strings.Replace(string(data), `"gpillon"`, `"mallory"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	check("with a damaged record on disk", 5)
	// Another tree's record, saved whole under this tree's id: the store
	// vouches for the file, the record still names its own tree.
	other := gitOf(t, copFS(t, "conventions: operator-pipelines\n"))
	otherOps, err := owners.ReadOperators(other, nil)
	if err != nil {
		t.Fatal(err)
	}
	operatorsKept.reset()
	if _, err := pipelinesTemplates(other, nil); err != nil {
		t.Fatal(err)
	}
	rec, _ := operatorsKept.get(otherOps.Tree)
	foreign, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SaveRecord(operatorsKind, first.Tree, foreign); err != nil {
		t.Fatal(err)
	}
	operatorsKept.reset()
	check("with another tree's record on disk", 5)
}

// withoutDirs is files without their directories' tree ids, which a tree
// that is not git (plain) has none of.
func withoutDirs(files []owners.CIYAMLRead) []owners.CIYAMLRead {
	out := slices.Clone(files)
	for i := range out {
		if out[i].Dir == "" {
			return nil // a file read from git without its directory's id
		}
		out[i].Dir = ""
	}
	return out
}

// TestOperatorsFromNearest: a new operators tree (the next base) takes
// from the record derived last, in the process or on disk, every package
// whose directory has the same tree id, and reads only the ci.yaml files
// of the directories that changed or are new: what it derives is what a
// reading of every file derives. A record on disk that cannot be trusted
// is not taken.
func TestOperatorsFromNearest(t *testing.T) {
	t.Cleanup(operatorsKept.reset)
	ancestor := operatorsFiles(t)
	next := maps.Clone(ancestor)
	// One package's directory changes without its ci.yaml (a bundle
	// added), one's ci.yaml changes, one is new, one is gone.
	next["operators/konflux/1.0.1/manifests/csv.yaml"] = &fstest.MapFile{Data: []byte("kind: ClusterServiceVersion\n")}
	next["operators/noreviewers/ci.yaml"] = &fstest.MapFile{Data: []byte("reviewers:\n  - somebody\n")}
	next["operators/added/ci.yaml"] = &fstest.MapFile{Data: []byte("fbc:\n  enabled: true\n  catalog_mapping: nope\n")}
	delete(next, "operators/broken/ci.yaml")
	want, plain := derived(t, next, LoadOptions{})
	if !strings.Contains(want, "operators/added/ci.yaml") || strings.Contains(want, "operators/broken/ci.yaml") {
		t.Fatalf("the next tree's notes are not its own:\n%s", want)
	}

	for _, where := range []string{"in the process", "on disk"} {
		t.Run(where, func(t *testing.T) {
			operatorsKept.reset()
			store, err := pkgindex.Open(t.TempDir(), pkgindex.Options{})
			if err != nil {
				t.Fatal(err)
			}
			o := LoadOptions{Records: store}
			derived(t, gitOf(t, ancestor), o)
			if where == "on disk" {
				operatorsKept.reset()
			}
			tree := &changetest.CountingFS{FS: gitOf(t, next), Match: isCIYAML}
			got, ops := derived(t, tree, o)
			if got != want {
				t.Errorf("derived from the ancestor's record\n%s\nwant\n%s", got, want)
			}
			if ops == nil || !reflect.DeepEqual(withoutDirs(ops.Files), plain.Files) {
				t.Errorf("the ci.yaml files for the owners check are %+v, want %+v", ops, plain)
			}
			// konflux (its directory changed), noreviewers and added.
			if n := tree.Reads(); n != 3 {
				t.Errorf("%d ci.yaml files read, want 3", n)
			}
			// The next process takes the next tree's own record.
			operatorsKept.reset()
			tree.Reset()
			if again, _ := derived(t, tree, o); again != want || tree.Reads() != 0 {
				t.Errorf("the next tree's record, kept: %d reads, derived\n%s", tree.Reads(), again)
			}
		})
	}

	t.Run("an untrusted record on disk", func(t *testing.T) {
		operatorsKept.reset()
		store, err := pkgindex.Open(t.TempDir(), pkgindex.Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := LoadOptions{Records: store}
		_, ops := derived(t, gitOf(t, ancestor), o)
		operatorsKept.reset()
		recordFile := filepath.Join(store.Dir(), ops.Tree+".operators.rec")
		data, err := os.ReadFile(recordFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(recordFile, []byte(strings.Replace(string(data), `"gpillon"`, `"mallory"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		tree := &changetest.CountingFS{FS: gitOf(t, next), Match: isCIYAML}
		if got, _ := derived(t, tree, o); got != want || tree.Reads() != 5 {
			t.Errorf("with a damaged ancestor's record: %d reads, derived\n%s", tree.Reads(), got)
		}
	})
}

// TestOperatorsConcurrent: checks of one base side by side (the App's)
// share one record and each gets the same policy.
func TestOperatorsConcurrent(t *testing.T) {
	t.Cleanup(operatorsKept.reset)
	operatorsKept.reset()
	files := operatorsFiles(t)
	want, _ := derived(t, files, LoadOptions{})
	tree := gitOf(t, files)
	store, err := pkgindex.Open(t.TempDir(), pkgindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, 8)
	done := make(chan int)
	for i := range got {
		go func() {
			defer func() { done <- i }()
			pol, findings, err := LoadFrom(tree, LoadOptions{Records: store})
			if err != nil || len(findings) > 0 {
				got[i] = fmt.Sprint(err, findings)
				return
			}
			b, _ := json.MarshalIndent(map[string]any{"templates": pol.Catalog.Templates, "notes": pol.Notes}, "", "  ")
			got[i] = string(b)
		}()
	}
	for range got {
		<-done
	}
	for i, g := range got {
		if g != want {
			t.Errorf("Load %d: %s", i, g)
		}
	}
}

// TestOperatorsSavedLater: a record derived by a reader without a store
// (the App's publish reads the policy so) is saved by the first reader
// with one, which reads no ci.yaml for it.
func TestOperatorsSavedLater(t *testing.T) {
	t.Cleanup(operatorsKept.reset)
	operatorsKept.reset()
	tree := &changetest.CountingFS{FS: gitOf(t, operatorsFiles(t)), Match: isCIYAML}
	_, ops := derived(t, tree, LoadOptions{})
	store, err := pkgindex.Open(t.TempDir(), pkgindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := store.LoadRecord(operatorsKind, ops.Tree); ok {
		t.Fatal("a record was saved to a store nobody gave")
	}
	tree.Reset()
	derived(t, tree, LoadOptions{Records: store})
	if n := tree.Reads(); n != 0 {
		t.Errorf("%d ci.yaml files read again", n)
	}
	if _, ok := store.LoadRecord(operatorsKind, ops.Tree); !ok {
		t.Error("the record known in the process was not saved for the next")
	}
}
