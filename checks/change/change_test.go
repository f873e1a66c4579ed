package change_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
)

const csv = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v1.0.0
spec:
  displayName: Foo Operator
  description: A long enough description that a small edit keeps the file similar.
  version: 1.0.0
`

func TestFromGit(t *testing.T) {
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		"OWNERS":                         "approvers: [root-admin]\n",
		"operators/foo/OWNERS":           "approvers: [alice]\n",
		"operators/foo/1.0.0/csv.yaml":   csv,
		"operators/foo/1.0.0/notes.txt":  "old notes\n",
		"operators/foo/1.0.0/delete.txt": "to be deleted\n",
	})
	r.Move("operators/foo/1.0.0/csv.yaml", "operators/bar/1.0.0/csv.yaml")
	head := r.Commit("head", map[string]string{
		"operators/foo/OWNERS":           "approvers: [alice, mallory]\n",
		"operators/foo/1.0.0/notes.txt":  "new notes\n",
		"operators/foo/1.0.0/delete.txt": changetest.Delete,
		"operators/foo/1.1.0/csv.yaml":   strings.ReplaceAll(csv, "1.0.0", "1.1.0") + "  replaces: foo.v1.0.0\n",
	})

	c, baseFS, headFS, err := change.FromGit(r.Dir, "HEAD~1", "main")
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseSHA != base || c.HeadSHA != head {
		t.Errorf("SHAs = %s..%s, want %s..%s", c.BaseSHA, c.HeadSHA, base, head)
	}
	want := []change.File{
		{Path: "operators/bar/1.0.0/csv.yaml", PreviousPath: "operators/foo/1.0.0/csv.yaml", Status: change.Renamed},
		{Path: "operators/foo/1.0.0/delete.txt", Status: change.Removed},
		{Path: "operators/foo/1.0.0/notes.txt", Status: change.Modified},
		{Path: "operators/foo/1.1.0/csv.yaml", Status: change.Added},
		{Path: "operators/foo/OWNERS", Status: change.Modified},
	}
	if !reflect.DeepEqual(c.Files, want) {
		t.Errorf("files:\n%+v\nwant:\n%+v", c.Files, want)
	}

	for _, tt := range []struct {
		fsys       fs.FS
		name, want string
	}{
		{baseFS, "operators/foo/OWNERS", "approvers: [alice]\n"},
		{headFS, "operators/foo/OWNERS", "approvers: [alice, mallory]\n"},
		{baseFS, "operators/foo/1.0.0/csv.yaml", csv},
		{headFS, "operators/bar/1.0.0/csv.yaml", csv},
	} {
		b, err := fs.ReadFile(tt.fsys, tt.name)
		if err != nil || string(b) != tt.want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", tt.name, b, err, tt.want)
		}
	}
	if _, err := fs.Stat(headFS, "operators/foo/1.0.0/csv.yaml"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("renamed file still in head tree: %v", err)
	}
	if _, err := fs.Stat(baseFS, "operators/foo/1.1.0"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("added directory already in base tree: %v", err)
	}
}

// TestFromGitMergeBase checks that commits which landed on the base branch
// after the head branched off are not part of the change, as on GitHub,
// while the base tree is the base branch as it is now.
func TestFromGitMergeBase(t *testing.T) {
	r := changetest.NewRepo(t)
	fork := r.Commit("fork point", map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	r.Commit("base moves on", map[string]string{"a.txt": "a2\n", "OWNERS": "approvers: [root-admin]\n"})
	r.Branch("feature", fork)
	r.Commit("the change", map[string]string{"b.txt": "b2\n"})

	c, baseFS, _, err := change.FromGit(r.Dir, "main", "feature")
	if err != nil {
		t.Fatal(err)
	}
	want := []change.File{{Path: "b.txt", Status: change.Modified}}
	if !reflect.DeepEqual(c.Files, want) {
		t.Errorf("files = %+v, want %+v", c.Files, want)
	}
	if b, err := fs.ReadFile(baseFS, "OWNERS"); err != nil || string(b) != "approvers: [root-admin]\n" {
		t.Errorf("base tree OWNERS = %q, %v; want the base branch's current file", b, err)
	}
}

func TestFromGitErrors(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Commit("one", map[string]string{"a": "a\n"})
	tests := []struct {
		name, dir, base, head, want string
	}{
		{"not a repository", t.TempDir(), "main", "main", "open git repository"},
		{"unknown base", r.Dir, "nope", "main", `resolve revision "nope"`},
		{"unknown head", r.Dir, "main", "deadbeef", `resolve revision "deadbeef"`},
		{"empty revision", r.Dir, "", "main", "empty revision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := change.FromGit(tt.dir, tt.base, tt.head)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestFromGitNoChange(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Commit("one", map[string]string{"a": "a\n"})
	c, _, _, err := change.FromGit(r.Dir, "main", "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 0 || c.BaseSHA != c.HeadSHA {
		t.Errorf("change = %+v, want no files", c)
	}
}

func TestFromGitSubdirectoryIsNotARepository(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Commit("one", map[string]string{"sub/a": "a\n"})
	if _, _, _, err := change.FromGit(filepath.Join(r.Dir, "sub"), "main", "main"); err == nil {
		t.Error("a subdirectory of a work tree opened as a repository")
	}
	if _, err := os.Stat(filepath.Join(r.Dir, ".git")); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	r := changetest.NewRepo(t)
	first := r.Commit("one", map[string]string{"a": "a\n"})
	second := r.Commit("two", map[string]string{"a": "b\n"})
	// A branch named by the first commit's id, pointing at the second:
	// a full id names its object, as git takes it, not a reference.
	if err := r.Git.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(first), plumbing.NewHash(second))); err != nil {
		t.Fatal(err)
	}
	for rev, want := range map[string]string{"main": second, "HEAD~1": first, first[:10]: first, first: first, second: second} {
		if got, err := change.Resolve(r.Git, rev); err != nil || got != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", rev, got, err, want)
		}
	}
	if _, err := change.Resolve(r.Git, strings.Repeat("0", 40)); err == nil {
		t.Error("a full id of no object resolved")
	}
}

func TestSortFiles(t *testing.T) {
	files := []change.File{
		{Path: "b", Status: change.Added},
		{Path: "a", PreviousPath: "z", Status: change.Renamed},
		{Path: "a", PreviousPath: "c", Status: change.Renamed},
	}
	change.SortFiles(files)
	got := []string{files[0].PreviousPath, files[1].PreviousPath, files[2].Path}
	if want := []string{"c", "z", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}
