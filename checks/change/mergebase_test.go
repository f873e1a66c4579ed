package change

import (
	"slices"
	"strings"
	"testing"
)

// TestMergeBaseAgreesWithGit: the merge bases found without go-git's
// walk of the whole history are git's own (`git merge-base --all`), on a
// history with a side branch merged and continued, branches that forked
// from each other, and a criss-cross merge with two merge bases; and the
// walk of both sides settles the forked cases itself.
func TestMergeBaseAgreesWithGit(t *testing.T) {
	dir := t.TempDir()
	GitCLI(t, dir, "", "init", "-q", "-b", "main")
	c := func(msg string) string {
		GitCLI(t, dir, "", "commit", "-q", "--allow-empty", "-m", msg)
		return GitCLI(t, dir, "", "rev-parse", "HEAD")
	}
	merge := func(other, msg string) string {
		GitCLI(t, dir, "", "merge", "-q", "--no-ff", "-m", msg, other)
		return GitCLI(t, dir, "", "rev-parse", "HEAD")
	}
	c("A")
	b := c("B")
	mainC := c("C")
	GitCLI(t, dir, "", "checkout", "-q", "-b", "side", b)
	s1 := c("S1")
	s2 := c("S2")
	GitCLI(t, dir, "", "checkout", "-q", "main")
	merge("side", "D")
	e := c("E")
	GitCLI(t, dir, "", "checkout", "-q", "side")
	s3 := c("S3")
	// A criss-cross: x and y each merge the other's first commit.
	GitCLI(t, dir, "", "checkout", "-q", "-b", "x", e)
	x1 := c("X1")
	GitCLI(t, dir, "", "checkout", "-q", "-b", "y", e)
	y1 := c("Y1")
	x2 := merge(x1, "Y2")
	GitCLI(t, dir, "", "checkout", "-q", "x")
	y2 := merge(y1, "X2")

	repo, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		a, b    string
		painted bool // settled by the walk of both sides
	}{
		{"side continued after its merge", e, s3, true},
		{"forked", mainC, s1, true},
		{"forked, the other way", s2, mainC, true},
		{"one descends from the other", b, e, true},
		{"criss-cross", x2, y2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := commit(repo, tc.a)
			if err != nil {
				t.Fatal(err)
			}
			b, err := commit(repo, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			bases, err := mergeBase(a, b)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range bases {
				got = append(got, c.Hash.String())
			}
			slices.Sort(got)
			want := strings.Fields(GitCLI(t, dir, "", "merge-base", "--all", tc.a, tc.b))
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("merge bases %v; git says %v", got, want)
			}
			if _, ok := paintedBase(a, b); ok != tc.painted {
				t.Errorf("settled by the walk of both sides: %v, want %v", ok, tc.painted)
			}
		})
	}
}
