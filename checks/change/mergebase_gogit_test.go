package change

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// TestMergeBasesAgreeWithGoGit: the date-ordered walk finds, for every
// pair of commits of each history, the merge bases go-git's exhaustive
// MergeBase finds: forks, fast-forwards, merges both ways, a criss-cross,
// unrelated roots, and committer dates out of order.
func TestMergeBasesAgreeWithGoGit(t *testing.T) {
	// Each history lists commits in the order they are written: a name,
	// its parents, and its committer time in minutes.
	type c struct {
		name    string
		parents []string
		at      int
	}
	tests := []struct {
		name    string
		commits []c
	}{
		{"a line", []c{{"a", nil, 0}, {"b", []string{"a"}, 1}, {"c", []string{"b"}, 2}}},
		{"a fork and a merge", []c{
			{"a", nil, 0}, {"b", []string{"a"}, 1}, {"x", []string{"b"}, 2}, {"y", []string{"b"}, 3},
			{"x2", []string{"x"}, 4}, {"m", []string{"y", "x2"}, 5}, {"z", []string{"m"}, 6}, {"w", []string{"x2"}, 7},
		}},
		{"a criss-cross", []c{
			{"a", nil, 0}, {"l", []string{"a"}, 1}, {"r", []string{"a"}, 2},
			{"lm", []string{"l", "r"}, 3}, {"rm", []string{"r", "l"}, 4}, {"l2", []string{"lm"}, 5}, {"r2", []string{"rm"}, 6},
		}},
		{"dates out of order", []c{
			{"a", nil, 10}, {"b", []string{"a"}, 0}, {"x", []string{"b"}, 20}, {"y", []string{"b"}, -5},
			{"x2", []string{"x"}, 1}, {"y2", []string{"y", "x"}, 30}, {"y3", []string{"y2"}, 2},
		}},
		{"unrelated roots", []c{{"a", nil, 0}, {"b", nil, 1}, {"c", []string{"a"}, 2}, {"d", []string{"b"}, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := memory.NewStorage()
			ids := map[string]plumbing.Hash{}
			names := map[plumbing.Hash]string{}
			var all []*object.Commit
			epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
			for _, cm := range tt.commits {
				sig := object.Signature{Name: "t", Email: "t@example.com", When: epoch.Add(time.Duration(cm.at) * time.Minute)}
				o := &object.Commit{Author: sig, Committer: sig, Message: cm.name, TreeHash: plumbing.ZeroHash}
				for _, p := range cm.parents {
					o.ParentHashes = append(o.ParentHashes, ids[p])
				}
				obj := s.NewEncodedObject()
				if err := o.Encode(obj); err != nil {
					t.Fatal(err)
				}
				h, err := s.SetEncodedObject(obj)
				if err != nil {
					t.Fatal(err)
				}
				ids[cm.name], names[h] = h, cm.name
				got, err := object.GetCommit(s, h)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, got)
			}
			nameOf := func(cs []*object.Commit) []string {
				var out []string
				for _, c := range cs {
					out = append(out, names[c.Hash])
				}
				slices.Sort(out)
				return out
			}
			for _, x := range all {
				for _, y := range all {
					want, err := x.MergeBase(y)
					if err != nil {
						t.Fatal(err)
					}
					got, err := mergeBase(x, y)
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(nameOf(got)) != fmt.Sprint(nameOf(want)) {
						t.Errorf("merge bases of %s and %s: %v, go-git's %v", names[x.Hash], names[y.Hash], nameOf(got), nameOf(want))
					}
				}
			}
		})
	}
}
