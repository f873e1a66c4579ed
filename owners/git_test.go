package owners_test

// These tests run the engine on real commits: repositories built with go-git
// in a temporary directory, read back through checks/change as a pull
// request check does.

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/owners"
)

const bundle = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v1.0.0
spec:
  description: An operator with a description long enough to be recognised after a move.
  version: 1.0.0
`

func baseTree() map[string]string {
	return map[string]string{
		"OWNERS":                             "approvers: [root-admin]\n",
		"OWNERS_ALIASES":                     "aliases:\n  foo-team: [alice, bob]\n",
		"operators/foo/OWNERS":               "approvers: [foo-team]\noptions:\n  no_parent_owners: true\n",
		"operators/foo/1.0.0/manifests.yaml": bundle,
		"operators/bar/OWNERS":               "approvers: [carol]\n",
	}
}

func evaluate(t *testing.T, r *changetest.Repo, base, head, author string, approvals ...owners.Approval) (*owners.State, *change.Change, fs.FS) {
	t.Helper()
	c, baseFS, headFS, err := change.FromGit(r.Dir, base, head)
	if err != nil {
		t.Fatal(err)
	}
	c.Author = author
	repo, err := owners.Load(baseFS, owners.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range approvals {
		if approvals[i].SHA == "" {
			approvals[i].SHA = c.HeadSHA
		}
	}
	// catalog.yaml at the root is the reference list, as the policy
	// decides for a repository that has one and names none.
	pol := owners.Policy{ReferenceLists: []string{"catalog.yaml"}}
	return repo.Evaluate(owners.Input{Change: c, Approvals: approvals, Policy: pol, Base: baseFS, Head: headFS}), c, headFS
}

func TestGitOwnersEditGrantsNothing(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Commit("base", baseTree())
	r.Branch("pr", r.Commit("nothing", nil))
	r.Commit("add mallory and a bundle", map[string]string{
		"operators/foo/OWNERS":               "approvers: [foo-team, mallory]\noptions:\n  no_parent_owners: true\n",
		"operators/foo/2.0.0/manifests.yaml": strings.ReplaceAll(bundle, "1.0.0", "2.0.0"),
	})

	st, c, headFS := evaluate(t, r, "main", "pr", "mallory")
	if st.Approved {
		t.Fatalf("mallory's own edit to OWNERS approved mallory's change: %s", st.Explain())
	}
	if !slices.Equal(st.Unapproved, []string{"operators/foo/OWNERS"}) {
		t.Errorf("unapproved = %v", st.Unapproved)
	}
	// The head tree would have let mallory in: that is the point.
	headRepo, err := owners.Load(headFS, owners.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !headRepo.Evaluate(owners.Input{Change: c}).Approved {
		t.Error("the head tree does not grant mallory, so this test shows nothing")
	}

	st, _, _ = evaluate(t, r, "main", "pr", "mallory", owners.Approval{User: "bob"})
	if !st.Approved {
		t.Errorf("bob's approval on the head did not approve: %s", st.Explain())
	}
}

func TestGitRenameOutOfProtectedDirectory(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Commit("base", baseTree())
	r.Move("operators/foo/1.0.0/manifests.yaml", "operators/bar/1.0.0/manifests.yaml")
	r.Commit("move the bundle to bar", nil)

	st, c, _ := evaluate(t, r, "HEAD~1", "HEAD", "carol")
	want := []change.File{{Path: "operators/bar/1.0.0/manifests.yaml", PreviousPath: "operators/foo/1.0.0/manifests.yaml", Status: change.Renamed}}
	if !slices.Equal(c.Files, want) {
		t.Fatalf("files = %+v, want the rename", c.Files)
	}
	// carol owns the new path (and approves as the author) but not the old.
	if st.Approved || !slices.Equal(st.Unapproved, []string{"operators/foo/OWNERS"}) {
		t.Errorf("approved %v, unapproved %v: a move out of foo needs foo's approval", st.Approved, st.Unapproved)
	}
	var whys []string
	for _, f := range st.Files {
		whys = append(whys, f.Path+" "+f.Why)
	}
	if want := []string{
		"operators/foo/1.0.0/manifests.yaml renamed to operators/bar/1.0.0/manifests.yaml",
		"operators/bar/1.0.0/manifests.yaml renamed from operators/foo/1.0.0/manifests.yaml",
	}; !slices.Equal(whys, want) {
		t.Errorf("paths %q, want %q", whys, want)
	}
	st, _, _ = evaluate(t, r, "HEAD~1", "HEAD", "carol", owners.Approval{User: "alice"})
	if !st.Approved {
		t.Errorf("not approved with both sides: %s", st.Explain())
	}
}

func TestGitStaleApprovalAfterPush(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Commit("base", baseTree())
	r.Branch("pr", r.Commit("nothing", nil))
	first := r.Commit("one", map[string]string{"operators/foo/1.0.0/notes.md": "one\n"})
	r.Commit("two", map[string]string{"operators/foo/1.0.0/notes.md": "two\n"})

	st, _, _ := evaluate(t, r, "main", "pr", "someone", owners.Approval{User: "alice", SHA: first})
	if st.Approved || len(st.NotCounted) != 1 || !strings.Contains(st.NotCounted[0].Reason, "not the head") {
		t.Errorf("an approval of the previous head counted: %s", st.Explain())
	}
}

func TestGitReferenceList(t *testing.T) {
	r := changetest.NewRepo(t)
	tree := baseTree()
	tree["catalog.yaml"] = "name: operators\nrepo: quay.io/example/catalog\ntag: latest\nreferences:\n- name: foo\n  image: quay.io/example/foo-index:v1\n- name: bar\n  image: quay.io/example/bar-index:v1\n"
	r.Commit("base", tree)
	r.Commit("bump foo", map[string]string{"catalog.yaml": strings.Replace(tree["catalog.yaml"], "foo-index:v1", "foo-index:v2", 1)})

	st, _, _ := evaluate(t, r, "HEAD~1", "HEAD", "bob")
	if !st.Approved || len(st.Files) != 1 || st.Files[0].Path != "operators/foo/index.yaml" {
		t.Errorf("bob, an owner of foo, bumping foo's entry: %s", st.Explain())
	}
	st, _, _ = evaluate(t, r, "HEAD~1", "HEAD", "carol")
	if st.Approved {
		t.Errorf("carol, an owner of bar, approved foo's entry: %s", st.Explain())
	}
}

// TestGitCoolCatalog replays the two commits of operator-framework/
// cool-catalog in the shared corpus: the later one replaced the per-package
// OWNERS layout and its catalog.yaml files by operator.json files.
func TestGitCoolCatalog(t *testing.T) {
	corpus := sharedCorpus(t)
	r := changetest.NewRepo(t)
	commit := func(dir string, old map[string]string) map[string]string {
		files := map[string]string{}
		root := filepath.Join(corpus, "cool-catalog", dir)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files[filepath.ToSlash(rel)] = string(b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		edits := map[string]string{}
		for p, c := range files {
			edits[p] = c
		}
		for p := range old {
			if _, ok := files[p]; !ok {
				edits[p] = changetest.Delete
			}
		}
		r.Commit(dir, edits)
		return files
	}
	old := commit("at-390b4f2", nil)
	commit("at-d33e0f2", old)

	st, c, _ := evaluate(t, r, "HEAD~1", "HEAD", "someone")
	if len(c.Files) == 0 || st.Approved {
		t.Fatalf("files %d, approved %v", len(c.Files), st.Approved)
	}
	// Removing catalog/etcd's OWNERS and catalog is grokspawn's to approve;
	// files with no OWNERS above them can be approved by nobody.
	st, _, _ = evaluate(t, r, "HEAD~1", "HEAD", "someone", owners.Approval{User: "grokspawn"})
	for _, f := range st.Files {
		inPackage := strings.HasPrefix(f.Path, "catalog/etcd/") || strings.HasPrefix(f.Path, "catalog/example-operator/")
		if inPackage != f.Approved {
			t.Errorf("%s (%s): approved %v", f.Path, f.Why, f.Approved)
		}
	}
	t.Logf("%s", st.Explain())
}
