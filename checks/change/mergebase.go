package change

import (
	"container/heap"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// mergeBases returns the best common ancestors of a and b, whose objects
// s holds. go-git's Commit.MergeBase reads every ancestor of one side
// first, the whole history of the repository: about a second of CPU for
// each check of a repository of 16,000 commits, more than the rest of
// the check. This walks down from both sides newest commit first, as
// git's merge-base does (paint_down_to_common), and stops once every
// commit left to visit lies below a common ancestor, so it reads the
// commits since the fork point and few more. When the walk finds more
// than one candidate (criss-cross history, or committer dates out of
// order) the choice among them is left to go-git's MergeBase, which
// removes the redundant ones.
func mergeBases(s storer.EncodedObjectStorer, a, b *object.Commit) ([]*object.Commit, error) {
	if a.Hash == b.Hash {
		return []*object.Commit{a}, nil
	}
	const (
		fromA = 1 << iota
		fromB
		stale  // below a common ancestor: no better one lies there
		result // found already
	)
	flags := map[plumbing.Hash]uint8{a.Hash: fromA, b.Hash: fromB}
	q := &byDate{a, b}
	heap.Init(q)
	var found []*object.Commit
	// A commit is queued again whenever it gains a flag; the walk ends
	// when every commit queued lies below a common ancestor.
	for slices.ContainsFunc(*q, func(c *object.Commit) bool { return flags[c.Hash]&stale == 0 }) {
		c := heap.Pop(q).(*object.Commit)
		f := flags[c.Hash] & (fromA | fromB | stale)
		if f == fromA|fromB {
			if flags[c.Hash]&result == 0 {
				flags[c.Hash] |= result
				found = append(found, c)
			}
			f |= stale
		}
		for _, h := range c.ParentHashes {
			if flags[h]&f == f {
				continue
			}
			p, err := object.GetCommit(s, h)
			if err != nil {
				return nil, err
			}
			flags[h] |= f
			heap.Push(q, p)
		}
	}
	if len(found) > 1 {
		return a.MergeBase(b)
	}
	return found, nil
}

// byDate is a queue of commits, the newest by committer date first.
type byDate []*object.Commit

func (q byDate) Len() int           { return len(q) }
func (q byDate) Less(i, j int) bool { return q[i].Committer.When.After(q[j].Committer.When) }
func (q byDate) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *byDate) Push(x any)        { *q = append(*q, x.(*object.Commit)) }
func (q *byDate) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}
