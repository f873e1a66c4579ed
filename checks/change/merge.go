package change

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Merged is the tree a branch will hold once a pull request is merged into
// it: what a merge decision judges, since main is the unit. Two pull
// requests that are each valid on the base they started from can be
// invalid together; only their merge result says so.
type Merged struct {
	// SHA is a commit whose tree is the merge result: theirs itself when
	// it already contains ours (a fast-forward), ours when it already
	// contains theirs, else a merge commit written into the repository
	// with parents ours and theirs. "" when Conflicts is not empty.
	SHA string
	// Tree is the merge result's tree id; main's tree after the merge is
	// compared with it.
	Tree string
	// MergeBase is the common ancestor the change was computed from.
	MergeBase string
	// Onto is ours: the base tip the head was merged onto.
	Onto string
	// Conflicts are the paths the two sides changed in ways that do not
	// combine, sorted; nothing is written when there are any.
	Conflicts []string
}

// Clean says whether the two sides merged without conflicts.
func (m *Merged) Clean() bool { return len(m.Conflicts) == 0 }

// mergeMaxEdits bounds the line edits a content merge of one file
// computes per side; a file changed more than that on both sides is a
// conflict, never a guess.
const mergeMaxEdits = 20000

// Merge three-way merges commit theirs (a pull request's head) into ours (a
// branch's tip) in repo, which must be writable (Open gives such a
// repository): the result git's merge would give where the two sides
// change different files, and different lines of one file, with both
// sides' content where they agree. Anything else (both sides changing the
// same lines differently, a file deleted on one side and changed on the
// other, a file turned into a directory, binary files changed on both
// sides) is a conflict, listed by path: it is reported, never resolved.
//
// The objects of a merge commit are written with a fixed author and the
// time of ours, so that the same two commits always give the same commit
// id. Every object read comes through repo's reader, so from a repository
// of Open it is verified.
func Merge(repo *git.Repository, ours, theirs string) (*Merged, error) {
	oc, err := commit(repo, ours)
	if err != nil {
		return nil, err
	}
	tc, err := commit(repo, theirs)
	if err != nil {
		return nil, err
	}
	bases, err := mergeBases(repo.Storer, oc, tc)
	if err != nil {
		return nil, fmt.Errorf("merge base of %s and %s: %w", ShortSHA(ours), ShortSHA(theirs), err)
	}
	if len(bases) == 0 {
		return nil, fmt.Errorf("%s and %s have no common history", ShortSHA(ours), ShortSHA(theirs))
	}
	// Of several merge bases (criss-cross history) the first is taken;
	// git's recursive strategy would merge them first. The merge
	// decision compares main's tree after the merge with this one, so a
	// difference is caught, not trusted.
	base := bases[0]
	m := &Merged{MergeBase: base.Hash.String(), Onto: oc.Hash.String()}
	switch {
	case base.Hash == oc.Hash:
		m.SHA, m.Tree = tc.Hash.String(), tc.TreeHash.String()
		return m, nil
	case base.Hash == tc.Hash:
		m.SHA, m.Tree = oc.Hash.String(), oc.TreeHash.String()
		return m, nil
	}
	w := &treeMerger{repo: repo}
	tree, err := w.merge("", entryOf(base.TreeHash, filemode.Dir), entryOf(oc.TreeHash, filemode.Dir), entryOf(tc.TreeHash, filemode.Dir))
	if err != nil {
		return nil, err
	}
	if len(w.conflicts) > 0 {
		slices.Sort(w.conflicts)
		m.Conflicts = w.conflicts
		return m, nil
	}
	if tree.hash.IsZero() {
		// Both sides together removed every file: an empty tree.
		if tree.hash, err = w.writeTree(nil); err != nil {
			return nil, err
		}
	}
	sig := object.Signature{Name: "catalogbot", Email: "catalogbot@users.noreply.github.com", When: oc.Committer.When}
	mc := &object.Commit{
		Author: sig, Committer: sig,
		Message:      fmt.Sprintf("Merge %s into %s\n", tc.Hash, oc.Hash),
		TreeHash:     tree.hash,
		ParentHashes: []plumbing.Hash{oc.Hash, tc.Hash},
	}
	obj := repo.Storer.NewEncodedObject()
	if err := mc.Encode(obj); err != nil {
		return nil, fmt.Errorf("merge commit: %w", err)
	}
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return nil, fmt.Errorf("write merge commit: %w", err)
	}
	m.SHA, m.Tree = h.String(), tree.hash.String()
	return m, nil
}

// MergeTree is Merge with the merge result read as a tree: the file system
// of the commit whose tree main will hold, nil when the two sides
// conflict (then only the head can be judged, alone, and nothing merges).
func MergeTree(repo *git.Repository, ours, theirs string) (fs.FS, *Merged, error) {
	m, err := Merge(repo, ours, theirs)
	if err != nil || !m.Clean() {
		return nil, m, err
	}
	t, err := TreeFS(repo, m.SHA)
	if err != nil {
		return nil, nil, err
	}
	return t, m, nil
}

// entry is one side of a path in a merge: its object and mode; a zero
// hash is absent.
type entry struct {
	hash plumbing.Hash
	mode filemode.FileMode
}

func entryOf(h plumbing.Hash, m filemode.FileMode) entry { return entry{hash: h, mode: m} }

func (e entry) absent() bool { return e.hash.IsZero() }
func (e entry) isDir() bool  { return !e.absent() && e.mode == filemode.Dir }

// file says whether the entry is a file whose lines can be merged.
func (e entry) file() bool {
	return !e.absent() && (e.mode == filemode.Regular || e.mode == filemode.Executable || e.mode == filemode.Deprecated)
}

type treeMerger struct {
	repo      *git.Repository
	conflicts []string
}

// merge merges one path; the result is absent when the path is gone.
func (w *treeMerger) merge(p string, b, o, t entry) (entry, error) {
	switch {
	case o == t:
		return o, nil
	case b == o:
		return t, nil
	case b == t:
		return o, nil
	case o.isDir() && t.isDir():
		return w.mergeDirs(p, b, o, t)
	case o.file() && t.file() && o.mode == t.mode && (b.absent() || b.file()):
		return w.mergeFiles(p, b, o, t)
	}
	w.conflicts = append(w.conflicts, p)
	return entry{}, nil
}

func (w *treeMerger) mergeDirs(p string, b, o, t entry) (entry, error) {
	bs, err := w.entries(b)
	if err != nil {
		return entry{}, err
	}
	ol, err := w.entries(o)
	if err != nil {
		return entry{}, err
	}
	ts, err := w.entries(t)
	if err != nil {
		return entry{}, err
	}
	names := map[string]bool{}
	for _, m := range []map[string]entry{bs, ol, ts} {
		for n := range m {
			names[n] = true
		}
	}
	var out []object.TreeEntry
	for _, n := range slices.Sorted(maps.Keys(names)) {
		r, err := w.merge(path.Join(p, n), bs[n], ol[n], ts[n])
		if err != nil {
			return entry{}, err
		}
		if !r.absent() {
			out = append(out, object.TreeEntry{Name: n, Mode: r.mode, Hash: r.hash})
		}
	}
	if len(out) == 0 {
		// git keeps no empty directories.
		return entry{}, nil
	}
	h, err := w.writeTree(out)
	if err != nil {
		return entry{}, err
	}
	return entryOf(h, filemode.Dir), nil
}

// entries reads the tree of a directory entry, by name; nothing for an
// absent one or a file (a file turned directory merges as a conflict
// before it gets here).
func (w *treeMerger) entries(e entry) (map[string]entry, error) {
	out := map[string]entry{}
	if !e.isDir() {
		return out, nil
	}
	tr, err := w.repo.TreeObject(e.hash)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", e.hash, err)
	}
	for _, te := range tr.Entries {
		out[te.Name] = entryOf(te.Hash, te.Mode)
	}
	return out, nil
}

// writeTree writes a tree of entries in git's order: by name, a
// directory's name compared as if it ended in a slash.
func (w *treeMerger) writeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortFunc(entries, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
	obj := w.repo.Storer.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge tree: %w", err)
	}
	h, err := w.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write merge tree: %w", err)
	}
	return h, nil
}

func (w *treeMerger) mergeFiles(p string, b, o, t entry) (entry, error) {
	var bb []byte
	if !b.absent() {
		var err error
		if bb, err = w.blob(b.hash); err != nil {
			return entry{}, err
		}
	}
	ob, err := w.blob(o.hash)
	if err != nil {
		return entry{}, err
	}
	tb, err := w.blob(t.hash)
	if err != nil {
		return entry{}, err
	}
	merged, ok := Merge3(bb, ob, tb)
	if !ok {
		w.conflicts = append(w.conflicts, p)
		return entry{}, nil
	}
	obj := w.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	wr, err := obj.Writer()
	if err != nil {
		return entry{}, err
	}
	if _, err := wr.Write(merged); err != nil {
		return entry{}, err
	}
	if err := wr.Close(); err != nil {
		return entry{}, err
	}
	h, err := w.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return entry{}, fmt.Errorf("write merged %s: %w", p, err)
	}
	return entryOf(h, o.mode), nil
}

func (w *treeMerger) blob(h plumbing.Hash) ([]byte, error) {
	b, err := w.repo.BlobObject(h)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	r, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	defer r.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	return out, nil
}

// errTooManyEdits stops a line diff past mergeMaxEdits.
var errTooManyEdits = errors.New("too many edits")

// Merge3 merges the line changes from base to ours and from base to theirs,
// as diff3 does: a region both sides changed merges only when they changed
// it the same way. ok is false on a conflict, on binary content (a NUL in
// either side) and on a side changed in more than mergeMaxEdits lines.
func Merge3(base, ours, theirs []byte) (merged []byte, ok bool) {
	for _, b := range [][]byte{base, ours, theirs} {
		if bytes.IndexByte(b, 0) >= 0 {
			return nil, false
		}
	}
	bl, ol, tl := splitLines(base), splitLines(ours), splitLines(theirs)
	mo, err := matchLines(bl, ol)
	if err != nil {
		return nil, false
	}
	mt, err := matchLines(bl, tl)
	if err != nil {
		return nil, false
	}
	var out [][]byte
	i, j, k := 0, 0, 0
	for {
		// The next base line both sides kept: everything before it is
		// one region, changed by one side, both, or neither.
		n := i
		for n < len(bl) && (mo[n] < 0 || mt[n] < 0) {
			n++
		}
		oe, te := len(ol), len(tl)
		if n < len(bl) {
			oe, te = mo[n], mt[n]
		}
		bs, os, ts := bl[i:n], ol[j:oe], tl[k:te]
		switch {
		case equalLines(os, bs):
			out = append(out, ts...)
		case equalLines(ts, bs), equalLines(os, ts):
			out = append(out, os...)
		default:
			return nil, false
		}
		if n == len(bl) {
			break
		}
		out = append(out, bl[n])
		i, j, k = n+1, oe+1, te+1
	}
	return bytes.Join(out, nil), true
}

// splitLines splits b after each newline, keeping it, so that joining the
// lines gives b back.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := bytes.IndexByte(b, '\n') + 1
		if n == 0 {
			n = len(b)
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

func equalLines(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, bytes.Equal)
}

// matchLines returns, for each line of a, the index of the line of b it is
// matched to by a shortest edit script (Myers' algorithm), or -1 when the
// script deletes it. The common prefix and suffix are matched first.
func matchLines(a, b [][]byte) ([]int, error) {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		m[pre] = pre
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		m[len(a)-1-suf] = len(b) - 1 - suf
		suf++
	}
	a2, b2 := a[pre:len(a)-suf], b[pre:len(b)-suf]
	pairs, err := myers(a2, b2)
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		m[pre+p[0]] = pre + p[1]
	}
	return m, nil
}

// myers returns the matched line pairs of a shortest edit script from a to
// b, in order.
func myers(a, b [][]byte) ([][2]int, error) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return nil, nil
	}
	max := n + m
	if max > 2*mergeMaxEdits {
		max = 2 * mergeMaxEdits
	}
	off := max + 1
	v := make([]int, 2*max+2)
	var trace [][]int
	for d := 0; d <= max; d++ {
		trace = append(trace, slices.Clone(v))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && bytes.Equal(a[x], b[y]) {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, off, n, m, d), nil
			}
		}
	}
	return nil, errTooManyEdits
}

// backtrack walks the trace of myers back from (n, m) and collects the
// diagonal moves: the matched pairs, in order.
func backtrack(trace [][]int, off, n, m, d int) [][2]int {
	var pairs [][2]int
	x, y := n, m
	for ; d > 0; d-- {
		v := trace[d]
		k := x - y
		pk := k - 1
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			pk = k + 1
		}
		px := v[off+pk]
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			pairs = append(pairs, [2]int{x, y})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		pairs = append(pairs, [2]int{x, y})
	}
	slices.Reverse(pairs)
	return pairs
}
