// Package replaytest rebuilds, for tests, the slice of real catalog
// repository history kept in policy/review/replay/testdata/history as a
// git repository.
package replaytest

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// storedCommit is one commit of testdata/history/commits.json.
type storedCommit struct {
	ID        string            `json:"id"`
	Author    storedSig         `json:"author"`
	Committer storedSig         `json:"committer"`
	Message   string            `json:"message"`
	Files     map[string]string `json:"files"`
}

type storedSig struct {
	Name  string    `json:"name"`
	Email string    `json:"email"`
	When  time.Time `json:"when"`
}

// History builds a bare git repository from the slice of real history in
// dir (policy/review/replay/testdata/history from the caller's
// package): each stored commit, oldest first, on the first-parent line of
// branch main, with the stored files as its tree. It returns the
// repository's directory and, by original commit id, the rebuilt one.
func History(t testing.TB, dir string) (string, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "commits.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stored []storedCommit
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	repoDir := t.TempDir()
	repo, err := git.PlainInit(repoDir, true)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	var parent plumbing.Hash
	for _, sc := range stored {
		blobs := map[string]plumbing.Hash{}
		for p, id := range sc.Files {
			content, err := os.ReadFile(filepath.Join(dir, "blobs", id))
			if err != nil {
				t.Fatal(err)
			}
			h := store(t, repo.Storer, plumbing.BlobObject, func(w *plumbing.MemoryObject) error {
				_, err := w.Write(content)
				return err
			})
			if h.String() != id {
				t.Fatalf("blob %s of %s hashes to %s", id, p, h)
			}
			blobs[p] = h
		}
		tree := writeTree(t, repo.Storer, blobs, "")
		c := &object.Commit{
			Author:    object.Signature{Name: sc.Author.Name, Email: sc.Author.Email, When: sc.Author.When},
			Committer: object.Signature{Name: sc.Committer.Name, Email: sc.Committer.Email, When: sc.Committer.When},
			Message:   sc.Message,
			TreeHash:  tree,
		}
		if !parent.IsZero() {
			c.ParentHashes = []plumbing.Hash{parent}
		}
		parent = store(t, repo.Storer, plumbing.CommitObject, func(w *plumbing.MemoryObject) error { return c.Encode(w) })
		ids[sc.ID] = parent.String()
	}
	main := plumbing.NewBranchReferenceName("main")
	if err := repo.Storer.SetReference(plumbing.NewHashReference(main, parent)); err != nil {
		t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, main)); err != nil {
		t.Fatal(err)
	}
	return repoDir, ids
}

func store(t testing.TB, s storer.EncodedObjectStorer, typ plumbing.ObjectType, encode func(*plumbing.MemoryObject) error) plumbing.Hash {
	t.Helper()
	obj := &plumbing.MemoryObject{}
	obj.SetType(typ)
	if err := encode(obj); err != nil {
		t.Fatal(err)
	}
	h, err := s.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// writeTree stores the tree of the files under dir (relative to the
// root) and returns its id.
func writeTree(t testing.TB, s storer.EncodedObjectStorer, files map[string]plumbing.Hash, dir string) plumbing.Hash {
	t.Helper()
	children := map[string]bool{}
	tree := &object.Tree{}
	for p, h := range files {
		rel := p
		if dir != "" {
			var ok bool
			if rel, ok = strings.CutPrefix(p, dir+"/"); !ok {
				continue
			}
		}
		if name, _, nested := strings.Cut(rel, "/"); nested {
			children[name] = true
		} else {
			tree.Entries = append(tree.Entries, object.TreeEntry{Name: rel, Mode: filemode.Regular, Hash: h})
		}
	}
	for name := range children {
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: writeTree(t, s, files, path.Join(dir, name))})
	}
	// Git orders a directory as if its name ended in a slash.
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortFunc(tree.Entries, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
	return store(t, s, plumbing.TreeObject, func(w *plumbing.MemoryObject) error { return tree.Encode(w) })
}
