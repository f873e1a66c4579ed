// Package changetest builds real git repositories for tests, in a temporary
// directory and without a git binary. Commits are deterministic: the same
// sequence of edits gives the same commit ids on every run. CountingFS
// counts the reads a reader makes of a tree, to show what it no longer
// reads.
package changetest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Delete, as the content of an edit, removes the file.
const Delete = "\x00delete"

// epoch is the time of the first commit; each later one is a minute on.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Repo is a git repository with a work tree under t.TempDir().
type Repo struct {
	t   testing.TB
	Dir string
	Git *git.Repository
	wt  *git.Worktree
	n   int
}

// NewRepo initialises an empty repository on branch main.
func NewRepo(t testing.TB) *Repo {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &Repo{t: t, Dir: dir, Git: repo, wt: wt}
}

// Commit writes the edits (path to content, or Delete) to the work tree,
// stages them and commits, returning the new commit id. Paths are
// slash-separated; edits are applied in path order.
func (r *Repo) Commit(msg string, edits map[string]string) string {
	r.t.Helper()
	paths := make([]string, 0, len(edits))
	for p := range edits {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		full := filepath.Join(r.Dir, filepath.FromSlash(p))
		if edits[p] == Delete {
			if _, err := r.wt.Remove(p); err != nil {
				r.t.Fatalf("remove %s: %v", p, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(edits[p]), 0o644); err != nil {
			r.t.Fatal(err)
		}
		if _, err := r.wt.Add(p); err != nil {
			r.t.Fatalf("add %s: %v", p, err)
		}
	}
	return r.commit(msg)
}

// Move renames a file in the work tree and the index without committing;
// the next Commit records it.
func (r *Repo) Move(from, to string) {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(r.Dir, filepath.FromSlash(to))), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.wt.Move(from, to); err != nil {
		r.t.Fatalf("move %s to %s: %v", from, to, err)
	}
}

func (r *Repo) commit(msg string) string {
	r.t.Helper()
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: epoch.Add(time.Duration(r.n) * time.Minute)}
	r.n++
	h, err := r.wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		r.t.Fatalf("commit %q: %v", msg, err)
	}
	return h.String()
}

// Branch creates branch name at commit rev and checks it out.
func (r *Repo) Branch(name, rev string) {
	r.t.Helper()
	err := r.wt.Checkout(&git.CheckoutOptions{
		Hash:   plumbing.NewHash(rev),
		Branch: plumbing.NewBranchReferenceName(name),
		Create: true,
	})
	if err != nil {
		r.t.Fatalf("branch %s at %s: %v", name, rev, err)
	}
}

// Checkout switches the work tree to an existing branch.
func (r *Repo) Checkout(name string) {
	r.t.Helper()
	if err := r.wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName(name)}); err != nil {
		r.t.Fatalf("checkout %s: %v", name, err)
	}
}

// ReadFiles returns the files under dir as Commit takes them: their
// slash-separated paths relative to dir, and their contents. It seeds a
// repository with a tree kept under testdata.
func ReadFiles(dir string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}
