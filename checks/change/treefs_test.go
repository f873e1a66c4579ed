package change_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
)

// store writes objects straight into a repository, for trees no work tree
// can produce: submodules, links that leave the tree, names git itself
// refuses to check out.
type store struct {
	t    *testing.T
	repo *git.Repository
}

func (s store) blob(content string) plumbing.Hash {
	obj := s.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		s.t.Fatal(err)
	}
	io.WriteString(w, content)
	w.Close()
	h, err := s.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		s.t.Fatal(err)
	}
	return h
}

func (s store) tree(entries ...object.TreeEntry) plumbing.Hash {
	sort.Sort(object.TreeEntrySorter(entries))
	obj := s.repo.Storer.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		s.t.Fatal(err)
	}
	h, err := s.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		s.t.Fatal(err)
	}
	return h
}

func (s store) commit(tree plumbing.Hash) string {
	sig := object.Signature{Name: "Test", Email: "test@example.com", When: time.Date(2024, 2, 3, 4, 5, 6, 0, time.UTC)}
	obj := s.repo.Storer.NewEncodedObject()
	c := &object.Commit{Author: sig, Committer: sig, Message: "tree\n", TreeHash: tree}
	if err := c.Encode(obj); err != nil {
		s.t.Fatal(err)
	}
	h, err := s.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		s.t.Fatal(err)
	}
	return h.String()
}

func file(name string, h plumbing.Hash) object.TreeEntry {
	return object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
}

func dir(name string, h plumbing.Hash) object.TreeEntry {
	return object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
}

func link(name string, h plumbing.Hash) object.TreeEntry {
	return object.TreeEntry{Name: name, Mode: filemode.Symlink, Hash: h}
}

// specialTree builds a tree with every kind of entry TreeFS must handle.
func specialTree(t *testing.T) fs.FS {
	t.Helper()
	r := changetest.NewRepo(t)
	s := store{t, r.Git}
	owners := s.blob("approvers: [alice]\n")
	pkg := s.tree(
		file("OWNERS", owners),
		file("catalog.yaml", s.blob("schema: olm.package\nname: foo\n")),
		object.TreeEntry{Name: "render.sh", Mode: filemode.Executable, Hash: s.blob("#!/bin/sh\n")},
	)
	root := s.tree(
		file("foo.txt", s.blob("text\n")),
		dir("foo", pkg),
		file("OWNERS", s.blob("approvers: [root-admin]\n")),
		file("empty", s.blob("")),
		link("owners-link", s.blob("foo/OWNERS")),
		link("pkg-link", s.blob("foo")),
		link("chain", s.blob("owners-link")),
		object.TreeEntry{Name: "vendored", Mode: filemode.Submodule, Hash: plumbing.NewHash("0123456789012345678901234567890123456789")},
		file("..", s.blob("crafted\n")),
	)
	fsys, err := change.TreeFS(r.Git, s.commit(root))
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

// TestTreeFSRefusesEmptyName: a crafted tree with an entry named "" is
// malformed, and go-git refuses to decode it, so no file system is made of
// it, at the root or below.
func TestTreeFSRefusesEmptyName(t *testing.T) {
	r := changetest.NewRepo(t)
	s := store{t, r.Git}
	crafted := s.tree(file("", s.blob("crafted\n")), file("ok", s.blob("ok\n")))
	t.Run("root", func(t *testing.T) {
		_, err := change.TreeFS(r.Git, s.commit(crafted))
		if !errors.Is(err, object.ErrMalformedTree) {
			t.Fatalf("TreeFS: %v, want %v", err, object.ErrMalformedTree)
		}
	})
	t.Run("below", func(t *testing.T) {
		fsys, err := change.TreeFS(r.Git, s.commit(s.tree(dir("pkg", crafted))))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fs.ReadDir(fsys, "pkg"); !errors.Is(err, object.ErrMalformedTree) {
			t.Fatalf("ReadDir pkg: %v, want %v", err, object.ErrMalformedTree)
		}
	})
}

func TestTreeFSConformance(t *testing.T) {
	fsys := specialTree(t)
	if err := fstest.TestFS(fsys,
		"OWNERS", "empty", "foo.txt", "foo/OWNERS", "foo/catalog.yaml", "foo/render.sh",
		"owners-link", "pkg-link", "chain", "vendored"); err != nil {
		t.Fatal(err)
	}
}

func TestTreeFSEntries(t *testing.T) {
	fsys := specialTree(t)
	var got []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		got = append(got, p+" "+info.Mode().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		". dr-xr-xr-x",
		"OWNERS -r--r--r--",
		"chain Lrwxrwxrwx",
		"empty -r--r--r--",
		"foo dr-xr-xr-x",
		"foo/OWNERS -r--r--r--",
		"foo/catalog.yaml -r--r--r--",
		"foo/render.sh -r-xr-xr-x",
		"foo.txt -r--r--r--",
		"owners-link Lrwxrwxrwx",
		"pkg-link Lrwxrwxrwx",
		"vendored dr-xr-xr-x",
	}
	if !slices.Equal(got, want) {
		t.Errorf("walk:\n%q\nwant:\n%q", got, want)
	}
}

func TestTreeFSLinks(t *testing.T) {
	fsys := specialTree(t)
	for _, name := range []string{"owners-link", "chain", "pkg-link/OWNERS"} {
		b, err := fs.ReadFile(fsys, name)
		if err != nil || string(b) != "approvers: [alice]\n" {
			t.Errorf("ReadFile(%s) = %q, %v; want the linked OWNERS", name, b, err)
		}
	}
	if target, err := fs.ReadLink(fsys, "chain"); err != nil || target != "owners-link" {
		t.Errorf("ReadLink(chain) = %q, %v", target, err)
	}
	if _, err := fs.ReadLink(fsys, "OWNERS"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadLink of a regular file: %v, want ErrInvalid", err)
	}
	info, err := fs.Lstat(fsys, "pkg-link")
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(pkg-link) = %v, %v; want a link", info, err)
	}
	info, err = fs.Stat(fsys, "pkg-link")
	if err != nil || !info.IsDir() || info.Name() != "pkg-link" {
		t.Errorf("Stat(pkg-link) = %v, %v; want the linked directory", info, err)
	}
	entries, err := fs.ReadDir(fsys, "pkg-link")
	if err != nil || len(entries) != 3 {
		t.Errorf("ReadDir(pkg-link) = %v, %v; want the package's three files", entries, err)
	}
}

// TestTreeFSLinksStayInside checks that no link reaches outside the tree,
// however it is spelt, and that loops end.
func TestTreeFSLinksStayInside(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("host file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := changetest.NewRepo(t)
	s := store{t, r.Git}
	sub := s.tree(link("up", s.blob("../../secret")))
	root := s.tree(
		link("abs", s.blob(secret)),
		link("dotdot", s.blob("../secret")),
		link("loop-a", s.blob("loop-b")),
		link("loop-b", s.blob("loop-a")),
		link("dangling", s.blob("nowhere")),
		link("empty", s.blob("")),
		dir("sub", sub),
	)
	fsys, err := change.TreeFS(r.Git, s.commit(root))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"abs", "dotdot", "loop-a", "dangling", "empty", "sub/up"} {
		if _, err := fs.ReadFile(fsys, name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%s): %v, want ErrNotExist", name, err)
		}
		if _, err := fsys.Open(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open(%s): %v, want ErrNotExist", name, err)
		}
		if _, err := fs.Lstat(fsys, name); err != nil {
			t.Errorf("Lstat(%s): %v, want the link itself", name, err)
		}
	}
}

func TestTreeFSErrors(t *testing.T) {
	fsys := specialTree(t)
	tests := []struct {
		name string
		op   func() error
		want error
	}{
		{"open invalid path", func() error { _, err := fsys.Open("/OWNERS"); return err }, fs.ErrInvalid},
		{"open dot-dot", func() error { _, err := fsys.Open("foo/../OWNERS"); return err }, fs.ErrInvalid},
		{"open missing", func() error { _, err := fsys.Open("foo/nope"); return err }, fs.ErrNotExist},
		{"file as directory", func() error { _, err := fsys.Open("OWNERS/x"); return err }, fs.ErrNotExist},
		{"crafted name is hidden", func() error { _, err := fs.Stat(fsys, "foo/.."); return err }, fs.ErrInvalid},
		{"stat missing", func() error { _, err := fs.Stat(fsys, "missing"); return err }, fs.ErrNotExist},
		{"readdir missing", func() error { _, err := fs.ReadDir(fsys, "missing"); return err }, fs.ErrNotExist},
		{"readfile missing", func() error { _, err := fs.ReadFile(fsys, "missing"); return err }, fs.ErrNotExist},
		{"readlink missing", func() error { _, err := fs.ReadLink(fsys, "missing"); return err }, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			var pe *fs.PathError
			if !errors.Is(err, tt.want) || !errors.As(err, &pe) {
				t.Errorf("error = %v, want a *fs.PathError wrapping %v", err, tt.want)
			}
		})
	}
	if _, err := fs.ReadDir(fsys, "OWNERS"); err == nil {
		t.Error("ReadDir of a file succeeded")
	}
	if _, err := fs.ReadFile(fsys, "foo"); err == nil {
		t.Error("ReadFile of a directory succeeded")
	}
	f, err := fsys.Open("OWNERS")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := f.Read(make([]byte, 1)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
}

func TestTreeFSInfo(t *testing.T) {
	fsys := specialTree(t)
	info, err := fs.Stat(fsys, "foo/catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != int64(len("schema: olm.package\nname: foo\n")) {
		t.Errorf("size = %d", info.Size())
	}
	if want := time.Date(2024, 2, 3, 4, 5, 6, 0, time.UTC); !info.ModTime().Equal(want) {
		t.Errorf("mod time = %v, want the commit time %v", info.ModTime(), want)
	}
	if _, ok := info.Sys().(plumbing.Hash); !ok {
		t.Errorf("Sys() = %T, want the object id", info.Sys())
	}
}

// TestTreeFSConcurrent reads the same tree from many goroutines; run with
// -race it shows the storer is not used unguarded.
func TestTreeFSConcurrent(t *testing.T) {
	r := changetest.NewRepo(t)
	edits := map[string]string{}
	for _, pkg := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		edits["operators/"+pkg+"/OWNERS"] = "approvers: [" + pkg + "]\n"
		edits["operators/"+pkg+"/catalog.yaml"] = "name: " + pkg + "\n"
	}
	r.Commit("packages", edits)
	fsys, err := change.TreeFS(r.Git, "main")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for p, want := range edits {
				if b, err := fs.ReadFile(fsys, p); err != nil || string(b) != want {
					t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
				}
			}
		})
	}
	wg.Wait()
}

func TestTreeFSBadRevision(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Commit("one", map[string]string{"a": "a\n"})
	if _, err := change.TreeFS(r.Git, "no-such-branch"); err == nil {
		t.Error("TreeFS of an unknown revision succeeded")
	}
}
