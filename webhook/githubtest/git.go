package githubtest

import (
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/go-git/go-git/v5/utils/merkletrie"
)

// Delete, as a value in a files map given to Commit, Push or AddRepo, removes that path.
const Delete = "\x00githubtest:delete\x00"

// blobEntry is one file of a flattened tree.
type blobEntry struct {
	hash plumbing.Hash
	mode filemode.FileMode
}

// flatten lists every file of a tree by its full path.
func flatten(st storer.EncodedObjectStorer, treeHash plumbing.Hash) (map[string]blobEntry, error) {
	out := map[string]blobEntry{}
	if treeHash.IsZero() {
		return out, nil
	}
	tree, err := object.GetTree(st, treeHash)
	if err != nil {
		return nil, fmt.Errorf("reading tree %s: %w", treeHash, err)
	}
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("walking tree %s: %w", treeHash, err)
		}
		if entry.Mode == filemode.Dir {
			continue
		}
		out[name] = blobEntry{hash: entry.Hash, mode: entry.Mode}
	}
	return out, nil
}

// writeBlob stores content as a blob.
func writeBlob(st storer.EncodedObjectStorer, content string) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := io.WriteString(w, content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// writeTree stores the nested trees for a flat path -> blob map and returns the root tree.
func writeTree(st storer.EncodedObjectStorer, files map[string]blobEntry) (plumbing.Hash, error) {
	type dir struct {
		files map[string]blobEntry
		dirs  map[string]map[string]blobEntry
	}
	d := dir{files: map[string]blobEntry{}, dirs: map[string]map[string]blobEntry{}}
	for p, e := range files {
		first, rest, nested := strings.Cut(p, "/")
		if !nested {
			d.files[first] = e
			continue
		}
		if d.dirs[first] == nil {
			d.dirs[first] = map[string]blobEntry{}
		}
		d.dirs[first][rest] = e
	}
	var entries []object.TreeEntry
	for name, e := range d.files {
		entries = append(entries, object.TreeEntry{Name: name, Mode: e.mode, Hash: e.hash})
	}
	for name, sub := range d.dirs {
		h, err := writeTree(st, sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	// Git orders tree entries by name, comparing a directory as if its name ended in "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	tree := &object.Tree{Entries: entries}
	obj := st.NewEncodedObject()
	if err := tree.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encoding tree: %w", err)
	}
	return st.SetEncodedObject(obj)
}

// applyFiles writes the blobs for changes into base (a flattened tree) and returns the new tree.
func applyFiles(st storer.EncodedObjectStorer, base map[string]blobEntry, changes map[string]string) (plumbing.Hash, error) {
	for p, content := range changes {
		p = strings.Trim(path.Clean("/"+p), "/")
		if p == "" {
			return plumbing.ZeroHash, fmt.Errorf("empty file path in changes")
		}
		if content == Delete {
			delete(base, p)
			continue
		}
		h, err := writeBlob(st, content)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("writing blob for %s: %w", p, err)
		}
		base[p] = blobEntry{hash: h, mode: filemode.Regular}
	}
	return writeTree(st, base)
}

// writeCommit stores a commit object.
func writeCommit(st storer.EncodedObjectStorer, tree plumbing.Hash, parents []plumbing.Hash, message, author string, when time.Time) (plumbing.Hash, error) {
	if author == "" {
		author = "githubtest"
	}
	sig := object.Signature{Name: author, Email: author + "@users.noreply.github.com", When: when}
	c := &object.Commit{
		Author:       sig,
		Committer:    object.Signature{Name: "GitHub", Email: "noreply@github.com", When: when},
		Message:      message,
		TreeHash:     tree,
		ParentHashes: parents,
	}
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encoding commit: %w", err)
	}
	return st.SetEncodedObject(obj)
}

// fileChange is one entry of a diff between two commits, as GitHub's PR files lists it.
type fileChange struct {
	Filename, PreviousFilename string
	Status                     string // added, modified, removed, renamed
	SHA                        string // blob at the new side; for a removal, the removed blob (as GitHub does)
	Additions, Deletions       int
}

// diffCommits lists the changes from commit a to commit b, with rename detection.
func diffCommits(st storer.EncodedObjectStorer, a, b plumbing.Hash) ([]fileChange, error) {
	ca, err := object.GetCommit(st, a)
	if err != nil {
		return nil, fmt.Errorf("reading commit %s: %w", a, err)
	}
	cb, err := object.GetCommit(st, b)
	if err != nil {
		return nil, fmt.Errorf("reading commit %s: %w", b, err)
	}
	ta, err := ca.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of %s: %w", a, err)
	}
	tb, err := cb.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of %s: %w", b, err)
	}
	// Git's (and so GitHub's) default rename threshold is 50% similarity.
	opts := &object.DiffTreeOptions{DetectRenames: true, RenameScore: 50}
	changes, err := object.DiffTreeWithOptions(context.Background(), ta, tb, opts)
	if err != nil {
		return nil, fmt.Errorf("diffing %s..%s: %w", a, b, err)
	}
	out := make([]fileChange, 0, len(changes))
	for _, ch := range changes {
		var fc fileChange
		action, err := ch.Action()
		if err != nil {
			return nil, fmt.Errorf("classifying change %s: %w", ch, err)
		}
		switch {
		case action == merkletrie.Insert:
			fc.Filename, fc.Status, fc.SHA = ch.To.Name, "added", ch.To.TreeEntry.Hash.String()
		case action == merkletrie.Delete:
			fc.Filename, fc.Status, fc.SHA = ch.From.Name, "removed", ch.From.TreeEntry.Hash.String()
		case ch.From.Name != ch.To.Name:
			fc.Filename, fc.PreviousFilename, fc.Status, fc.SHA = ch.To.Name, ch.From.Name, "renamed", ch.To.TreeEntry.Hash.String()
		default:
			fc.Filename, fc.Status, fc.SHA = ch.To.Name, "modified", ch.To.TreeEntry.Hash.String()
		}
		patch, err := ch.Patch()
		if err != nil {
			return nil, fmt.Errorf("patch for %s: %w", fc.Filename, err)
		}
		for _, stat := range patch.Stats() {
			fc.Additions += stat.Addition
			fc.Deletions += stat.Deletion
		}
		out = append(out, fc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Filename < out[j].Filename })
	return out, nil
}

// mergeBase returns the best common ancestor of a and b.
func mergeBase(st storer.EncodedObjectStorer, a, b plumbing.Hash) (plumbing.Hash, error) {
	ca, err := object.GetCommit(st, a)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading commit %s: %w", a, err)
	}
	cb, err := object.GetCommit(st, b)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading commit %s: %w", b, err)
	}
	bases, err := ca.MergeBase(cb)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge base of %s and %s: %w", a, b, err)
	}
	if len(bases) == 0 {
		return plumbing.ZeroHash, fmt.Errorf("%s and %s have no common ancestor", a, b)
	}
	return bases[0].Hash, nil
}

// touchedPaths is every path a list of changes reads or writes.
func touchedPaths(changes []fileChange) map[string]bool {
	out := map[string]bool{}
	for _, c := range changes {
		out[c.Filename] = true
		if c.PreviousFilename != "" {
			out[c.PreviousFilename] = true
		}
	}
	return out
}

// newStorage returns an empty repository storage whose HEAD points at branch.
func newStorage(branch string) (*memory.Storage, error) {
	st := memory.NewStorage()
	head := plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch))
	if err := st.SetReference(head); err != nil {
		return nil, fmt.Errorf("setting HEAD: %w", err)
	}
	return st, nil
}
