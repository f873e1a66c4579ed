package propose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// writeCommit writes a commit on parent whose tree is parent's with the
// files in edits (path to content) put in place, into repo's object
// store alone: no work tree, index or reference is touched.
func writeCommit(repo *git.Repository, parent *object.Commit, edits map[string][]byte, msg string, sig object.Signature) (plumbing.Hash, error) {
	tree, err := writeTree(repo, parent.TreeHash, edits)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: []plumbing.Hash{parent.Hash}}
	return store(repo, c.Encode)
}

// writeTree writes the tree h with edits, paths relative to it, and
// returns the new tree's id. h may be zero: a directory that is new.
func writeTree(repo *git.Repository, h plumbing.Hash, edits map[string][]byte) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	if !h.IsZero() {
		t, err := repo.TreeObject(h)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read tree %s: %w", h, err)
		}
		entries = slices.Clone(t.Entries)
	}
	files := map[string][]byte{}
	dirs := map[string]map[string][]byte{}
	for p, data := range edits {
		first, rest, sub := strings.Cut(p, "/")
		if sub {
			if dirs[first] == nil {
				dirs[first] = map[string][]byte{}
			}
			dirs[first][rest] = data
			continue
		}
		files[first] = data
	}
	index := func(name string) int {
		return slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == name })
	}
	for name, data := range files {
		blob := repo.Storer.NewEncodedObject()
		blob.SetType(plumbing.BlobObject)
		w, err := blob.Writer()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := w.Write(data); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := w.Close(); err != nil {
			return plumbing.ZeroHash, err
		}
		bh, err := repo.Storer.SetEncodedObject(blob)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("write %s: %w", name, err)
		}
		e := object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: bh}
		if i := index(name); i >= 0 {
			if entries[i].Mode == filemode.Dir {
				return plumbing.ZeroHash, fmt.Errorf("%s is a directory", name)
			}
			e.Mode = entries[i].Mode
			entries[i] = e
		} else {
			entries = append(entries, e)
		}
	}
	for name, sub := range dirs {
		var from plumbing.Hash
		i := index(name)
		if i >= 0 {
			if entries[i].Mode != filemode.Dir {
				return plumbing.ZeroHash, fmt.Errorf("%s is not a directory", name)
			}
			from = entries[i].Hash
		}
		th, err := writeTree(repo, from, sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		e := object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: th}
		if i >= 0 {
			entries[i] = e
		} else {
			entries = append(entries, e)
		}
	}
	// git's order: by name, a directory compared as if it ended in "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortFunc(entries, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
	return store(repo, (&object.Tree{Entries: entries}).Encode)
}

// store encodes an object into repo's object store.
func store(repo *git.Repository, encode func(plumbing.EncodedObject) error) (plumbing.Hash, error) {
	obj := repo.Storer.NewEncodedObject()
	if err := encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object: %w", err)
	}
	return h, nil
}
