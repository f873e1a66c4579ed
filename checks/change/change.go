// Package change describes what a pull request changes: its files (with
// renames), its author and the commits it goes from and to. It also reads a
// local git repository into that shape, with the trees at both ends exposed
// as read-only file systems, so checks run on commits without a checkout and
// without executing anything from them.
package change

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/merkletrie"

	"github.com/catalogbot/catalogbot/checks"
)

// File statuses, spelled as GitHub's pull request files API spells them.
const (
	Added    = "added"
	Modified = "modified"
	Removed  = "removed"
	Renamed  = "renamed"
)

// File is one changed file. Path is slash-separated and relative to the
// repository root; for a rename Path is the new name and PreviousPath the old.
type File struct {
	Path         string `json:"path"`
	PreviousPath string `json:"previousPath,omitempty"`
	Status       string `json:"status"`
}

// Change is a pull request reduced to what the checks need. Repo is
// "owner/name" when known. HeadSHA is the commit that is checked: every
// verdict about the change is bound to it.
type Change struct {
	Repo    string `json:"repo,omitempty"`
	Number  int    `json:"number,omitempty"`
	Author  string `json:"author,omitempty"`
	BaseSHA string `json:"baseSHA"`
	HeadSHA string `json:"headSHA"`
	Files   []File `json:"files"`
}

// Paths lists every path the change touches: each file's path, and for a
// rename the previous path too. A rename moves content out of one place
// and into another, so both places' owners and checks have a say.
func (c *Change) Paths() []string {
	out := make([]string, 0, len(c.Files))
	for _, f := range c.Files {
		out = append(out, f.Path)
		if f.PreviousPath != "" {
			out = append(out, f.PreviousPath)
		}
	}
	return out
}

// ShortSHA abbreviates a commit id to the 12 characters messages show.
func ShortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// FromGit opens the git repository at repoDir (a work tree or a bare
// repository) and describes the change from baseRev to headRev, returning it
// with the trees of both commits.
//
// The files are those GitHub lists for a pull request: the difference between
// the merge base of the two commits and headRev, so commits that landed on the
// base branch after the head branched off are not counted as the change's.
// When the commits have no single merge base the two are compared directly.
// The base tree returned is that of baseRev itself, the trusted state the
// change is checked against.
func FromGit(repoDir, baseRev, headRev string) (*Change, fs.FS, fs.FS, error) {
	repo, err := Open(repoDir)
	if err != nil {
		return nil, nil, nil, err
	}
	base, err := commit(repo, baseRev)
	if err != nil {
		return nil, nil, nil, err
	}
	head, err := commit(repo, headRev)
	if err != nil {
		return nil, nil, nil, err
	}
	from := base
	if !descends(head, base.Hash) {
		if mb, err := mergeBase(base, head); err == nil && len(mb) == 1 {
			from = mb[0]
		}
	}
	files, err := diff(repo, from, head)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("diff %s..%s: %w", baseRev, headRev, err)
	}
	baseFS, err := commitFS(repo, base)
	if err != nil {
		return nil, nil, nil, err
	}
	headFS, err := commitFS(repo, head)
	if err != nil {
		return nil, nil, nil, err
	}
	c := &Change{BaseSHA: base.Hash.String(), HeadSHA: head.Hash.String(), Files: files}
	return c, baseFS, headFS, nil
}

// maxAncestry bounds the walk of descends: a pull request's head is
// usually a few commits past its base.
const maxAncestry = 1000

// descends reports whether ancestor is head or one of the first
// maxAncestry commits behind it. If so, ancestor is the merge base of the
// two, found without go-git's MergeBase, which walks the whole history
// (a second or more on a large repository). false only means "not found
// nearby": the caller then asks MergeBase.
func descends(head *object.Commit, ancestor plumbing.Hash) bool {
	seen := map[plumbing.Hash]bool{head.Hash: true}
	queue := []*object.Commit{head}
	for len(queue) > 0 && len(seen) <= maxAncestry {
		c := queue[0]
		queue = queue[1:]
		if c.Hash == ancestor {
			return true
		}
		for _, h := range c.ParentHashes {
			if h == ancestor {
				return true
			}
			if seen[h] {
				continue
			}
			seen[h] = true
			p, err := c.Parent(slices.Index(c.ParentHashes, h))
			if err != nil {
				return false
			}
			queue = append(queue, p)
		}
	}
	return false
}

// Resolve returns the full commit id that rev names in repo: a branch, a
// tag, an abbreviated id or an expression such as HEAD~1.
func Resolve(repo *git.Repository, rev string) (string, error) {
	c, err := commit(repo, rev)
	if err != nil {
		return "", err
	}
	return c.Hash.String(), nil
}

func commit(repo *git.Repository, rev string) (*object.Commit, error) {
	if rev == "" {
		return nil, errors.New("empty revision")
	}
	// A full object id names that object, as git takes it, with no
	// lookup of references: go-git would first read every packed
	// reference (tens of milliseconds in a repository of many tags).
	if len(rev) == 2*len(plumbing.ZeroHash) && plumbing.IsHash(rev) {
		c, err := repo.CommitObject(plumbing.NewHash(rev))
		if err != nil {
			return nil, fmt.Errorf("revision %q: %w", rev, err)
		}
		return c, nil
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, fmt.Errorf("resolve revision %q: %w%s", rev, err, checks.DidYouMean(rev, refNames(repo)))
	}
	c, err := repo.CommitObject(*h)
	if err != nil {
		return nil, fmt.Errorf("revision %q: %w", rev, err)
	}
	return c, nil
}

// refNames are the short names of the repository's branches, remote
// branches and tags, as a revision names them ("main", "origin/main"),
// for the suggestion of a revision that does not resolve.
func refNames(repo *git.Repository) []string {
	refs, err := repo.References()
	if err != nil {
		return nil
	}
	defer refs.Close()
	var out []string
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		if n := r.Name(); n.IsBranch() || n.IsRemote() || n.IsTag() {
			out = append(out, n.Short())
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// diff lists the files that differ between two commits, with renames
// detected as git does by default (50% similar is not enough: go-git's
// recommended threshold of 60 is used).
//
// Trees whose ids are equal on both sides are not read: a change to one
// package of a repository of tens of thousands of directories reads the
// trees on the paths it changed (treeDiff), where go-git's DiffTree reads
// every child tree of each directory it compares. Only a change that both
// adds and removes files can hold a rename; go-git's diff, with its rename
// detection, decides those.
func diff(repo *git.Repository, from, to *object.Commit) ([]File, error) {
	t := &treeFS{s: repo.Storer, objects: objectStore(repo)}
	files, err := treeDiff(t, from.TreeHash, to.TreeHash)
	if err != nil {
		return nil, err
	}
	added := slices.ContainsFunc(files, func(f File) bool { return f.Status == Added })
	removed := slices.ContainsFunc(files, func(f File) bool { return f.Status == Removed })
	if added && removed {
		return gitDiff(from, to)
	}
	SortFiles(files)
	return files, nil
}

// treeDiff lists the files added, removed and modified between the trees a
// and b, reading only the trees that differ. A path that is a file on one
// side and a directory on the other is the file removed (or added) and the
// directory's files added (or removed), as go-git's diff has it; a mode
// change is a modification.
func treeDiff(t *treeFS, a, b plumbing.Hash) ([]File, error) {
	var out []File
	var walk func(dir string, a, b plumbing.Hash) error
	// all lists every file under the tree h as status.
	var all func(dir string, h plumbing.Hash, status string) error
	all = func(dir string, h plumbing.Hash, status string) error {
		entries, err := t.treeEntries(h)
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := path.Join(dir, e.Name)
			if e.Mode == filemode.Dir {
				if err := all(p, e.Hash, status); err != nil {
					return err
				}
				continue
			}
			out = append(out, File{Path: p, Status: status})
		}
		return nil
	}
	walk = func(dir string, a, b plumbing.Hash) error {
		if a == b {
			return nil
		}
		ea, err := t.treeEntries(a)
		if err != nil {
			return err
		}
		eb, err := t.treeEntries(b)
		if err != nil {
			return err
		}
		byName := make(map[string]object.TreeEntry, len(ea))
		for _, e := range ea {
			byName[e.Name] = e
		}
		for _, nb := range eb {
			p := path.Join(dir, nb.Name)
			na, ok := byName[nb.Name]
			delete(byName, nb.Name)
			switch {
			case !ok:
				if nb.Mode == filemode.Dir {
					err = all(p, nb.Hash, Added)
				} else {
					out = append(out, File{Path: p, Status: Added})
				}
			case na.Hash == nb.Hash && na.Mode == nb.Mode:
			case na.Mode == filemode.Dir && nb.Mode == filemode.Dir:
				err = walk(p, na.Hash, nb.Hash)
			case na.Mode == filemode.Dir:
				if err = all(p, na.Hash, Removed); err == nil {
					out = append(out, File{Path: p, Status: Added})
				}
			case nb.Mode == filemode.Dir:
				out = append(out, File{Path: p, Status: Removed})
				err = all(p, nb.Hash, Added)
			default:
				out = append(out, File{Path: p, Status: Modified})
			}
			if err != nil {
				return err
			}
		}
		for _, na := range ea {
			if _, gone := byName[na.Name]; !gone {
				continue
			}
			p := path.Join(dir, na.Name)
			if na.Mode == filemode.Dir {
				if err := all(p, na.Hash, Removed); err != nil {
					return err
				}
				continue
			}
			out = append(out, File{Path: p, Status: Removed})
		}
		return nil
	}
	if err := walk("", a, b); err != nil {
		return nil, err
	}
	return out, nil
}

// gitDiff is go-git's diff of the commits' trees, renames detected.
func gitDiff(from, to *object.Commit) ([]File, error) {
	a, err := from.Tree()
	if err != nil {
		return nil, err
	}
	b, err := to.Tree()
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTreeWithOptions(context.Background(), a, b, object.DefaultDiffTreeOptions)
	if err != nil {
		return nil, err
	}
	files := make([]File, 0, len(changes))
	for _, ch := range changes {
		action, err := ch.Action()
		if err != nil {
			return nil, err
		}
		var f File
		switch action {
		case merkletrie.Insert:
			f = File{Path: ch.To.Name, Status: Added}
		case merkletrie.Delete:
			f = File{Path: ch.From.Name, Status: Removed}
		case merkletrie.Modify:
			if ch.From.Name != ch.To.Name {
				f = File{Path: ch.To.Name, PreviousPath: ch.From.Name, Status: Renamed}
			} else {
				f = File{Path: ch.To.Name, Status: Modified}
			}
		default:
			return nil, fmt.Errorf("unexpected change action %v", action)
		}
		files = append(files, f)
	}
	SortFiles(files)
	return files, nil
}

// SortFiles orders files by path, then by previous path, so listings and
// reports do not depend on the order a diff or an API returned them in.
func SortFiles(files []File) {
	slices.SortFunc(files, func(a, b File) int {
		if a.Path != b.Path {
			if a.Path < b.Path {
				return -1
			}
			return 1
		}
		switch {
		case a.PreviousPath < b.PreviousPath:
			return -1
		case a.PreviousPath > b.PreviousPath:
			return 1
		}
		return 0
	})
}
