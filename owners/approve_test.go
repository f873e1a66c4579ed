package owners_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
)

// prowTree is the example tree of the spec, section 1.
func prowTree() fstest.MapFS {
	return fstest.MapFS{
		"OWNERS":                  {Data: []byte("approvers: [root-admin]\n")},
		"OWNERS_ALIASES":          {Data: []byte("aliases: {foo-team: [Alice, \"@bob\"]}\n")},
		"operators/foo/OWNERS":    {Data: []byte("approvers: [foo-team]\noptions: {no_parent_owners: true}\n")},
		"operators/bar/OWNERS":    {Data: []byte("filters:\n  \"^ci\\\\.yaml$\": {approvers: [carol]}\n  \".*\": {reviewers: [dave]}\n")},
		"operators/baz/OWNERS":    {Data: []byte("reviewers: [erin]\noptions: {no_parent_owners: true}\n")},
		"operators/foo/1.0/x.txt": {Data: []byte("x")},
	}
}

func load(t testing.TB, fsys fstest.MapFS) *owners.Repo {
	t.Helper()
	r, err := owners.Load(fsys, owners.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func files(n int, dir string) []change.File {
	out := make([]change.File, n)
	for i := range out {
		out[i] = change.File{Path: fmt.Sprintf("%s/f%04d", dir, i), Status: change.Modified}
	}
	return out
}

func TestFileLimits(t *testing.T) {
	r := load(t, prowTree())
	approve := []owners.Approval{{User: "root-admin", SHA: "h1"}}
	tests := []struct {
		name  string
		files []change.File
		want  bool
		why   string
	}{
		{"no files", nil, false, "the change has no files"},
		{"one under the limit", files(owners.MaxFiles-1, "docs"), true, "all 2999 paths"},
		{"at the limit", files(owners.MaxFiles, "docs"), false, "the change has 3000 files"},
		{"over the limit", files(owners.MaxFiles+1, "docs"), false, "the change has 3001 files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := r.Evaluate(owners.Input{Change: &change.Change{Author: "x", HeadSHA: "h1", Files: tt.files}, Approvals: approve})
			if st.Approved != tt.want || !strings.HasPrefix(st.Reason, tt.why) {
				t.Errorf("approved = %v (%s), want %v (%s...)", st.Approved, st.Reason, tt.want, tt.why)
			}
		})
	}
}

func TestEvaluateNilChange(t *testing.T) {
	st := load(t, prowTree()).Evaluate(owners.Input{})
	if st.Approved || st.Files == nil || st.Suggested == nil || st.Findings == nil {
		t.Errorf("state = %+v, want not approved with empty lists", st)
	}
}

// TestSuggestDeterministic checks that suggestions depend on the change
// number only: the same number always gives the same answer, whatever the
// order of the files, and different numbers spread ties across people.
func TestSuggestDeterministic(t *testing.T) {
	fsys := fstest.MapFS{"OWNERS": {Data: []byte("approvers: [root-admin]\n")}}
	var fs []change.File
	for i := range 8 {
		fsys[fmt.Sprintf("operators/p%d/OWNERS", i)] = &fstest.MapFile{Data: []byte("approvers: [ann, bea, cat, dan]\n")}
		fs = append(fs, change.File{Path: fmt.Sprintf("operators/p%d/x", i), Status: change.Modified})
	}
	r := load(t, fsys)
	suggest := func(number int, files []change.File) []string {
		return r.Evaluate(owners.Input{Change: &change.Change{Number: number, Author: "x", HeadSHA: "h", Files: files}}).Suggested
	}
	first := map[string]bool{}
	for n := 1; n <= 40; n++ {
		s := suggest(n, fs)
		if len(s) != 1 {
			t.Fatalf("change %d: suggested %v, want one person who approves everything", n, s)
		}
		reversed := slices.Clone(fs)
		slices.Reverse(reversed)
		for range 3 {
			if again := suggest(n, reversed); !slices.Equal(again, s) {
				t.Fatalf("change %d: suggested %v, then %v", n, s, again)
			}
		}
		first[s[0]] = true
	}
	if len(first) < 3 {
		t.Errorf("over 40 changes only %v were suggested; ties should spread", first)
	}
}

// TestSuggestGreedy checks the set cover picks the fewest people when one
// approver covers most paths, and widens to non-leaf approvers only when no
// leaf approver is available.
func TestSuggestGreedy(t *testing.T) {
	r := load(t, fstest.MapFS{
		"OWNERS":              {Data: []byte("approvers: [root-admin]\n")},
		"a/OWNERS":            {Data: []byte("approvers: [zed, ann]\n")},
		"b/OWNERS":            {Data: []byte("approvers: [zed, bea]\n")},
		"c/OWNERS":            {Data: []byte("approvers: [zed]\n")},
		"d/OWNERS":            {Data: []byte("approvers: [author]\n")},
		"e/OWNERS":            {Data: []byte("approvers: [cat]\noptions: {no_parent_owners: true}\n")},
		"e/sub/OWNERS":        {Data: []byte("approvers: [dan]\n")},
		"nobody/OWNERS":       {Data: []byte("reviewers: [rev]\noptions: {no_parent_owners: true}\n")},
		"nobody/x/OWNERS":     {Data: []byte("labels: [x]\n")},
		"empty/OWNERS":        {Data: []byte("approvers: []\noptions: {no_parent_owners: true}\n")},
		"filtered/OWNERS":     {Data: []byte("filters: {'\\.md$': {approvers: [doc]}}\n")},
		"filtered/sub/OWNERS": {Data: []byte("approvers: [sub]\n")},
	})
	tests := []struct {
		name  string
		paths []string
		pol   owners.Policy
		want  []string
	}{
		{"one covers most", []string{"a/x", "b/x", "c/x"}, owners.Policy{}, []string{"zed"}},
		{"each needs its own", []string{"c/x", "e/sub/x"}, owners.Policy{}, []string{"dan", "zed"}},
		{"the author is not asked", []string{"d/x"}, owners.Policy{NoSelfApproval: true}, []string{"root-admin"}},
		{"paths with filters", []string{"filtered/sub/a.md", "filtered/sub/b.go"}, owners.Policy{}, []string{"sub"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fs []change.File
			for _, p := range tt.paths {
				fs = append(fs, change.File{Path: p, Status: change.Modified})
			}
			st := r.Evaluate(owners.Input{Change: &change.Change{Number: 1, Author: "author", HeadSHA: "h", Files: fs}, Policy: tt.pol})
			got := slices.Clone(st.Suggested)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("suggested %v, want %v", st.Suggested, tt.want)
			}
		})
	}
}

func TestEvaluateDetails(t *testing.T) {
	r := load(t, prowTree())
	ch := &change.Change{Author: "someone", HeadSHA: "ABCDEF", Files: []change.File{
		{Path: "operators/foo/x", Status: change.Modified},
	}}
	t.Run("SHAs compare case-insensitively", func(t *testing.T) {
		st := r.Evaluate(owners.Input{Change: ch, Approvals: []owners.Approval{{User: "bob", SHA: "abcdef"}}})
		if !st.Approved {
			t.Error(st.Reason)
		}
	})
	t.Run("an empty collaborator list lets nobody approve", func(t *testing.T) {
		st := r.Evaluate(owners.Input{Change: ch, Approvals: []owners.Approval{{User: "bob", SHA: "abcdef"}}, Collaborators: []string{}})
		if st.Approved {
			t.Error("approved")
		}
	})
	t.Run("an unknown head binds no approval", func(t *testing.T) {
		c := *ch
		c.HeadSHA = ""
		st := r.Evaluate(owners.Input{Change: &c, Approvals: []owners.Approval{{User: "bob"}}})
		if st.Approved || len(st.NotCounted) != 1 || !strings.Contains(st.NotCounted[0].Reason, "head commit is unknown") {
			t.Errorf("state = %+v", st)
		}
	})
	t.Run("a path outside the tree needs the root", func(t *testing.T) {
		c := *ch
		c.Files = []change.File{{Path: "../escape", Status: change.Added}}
		st := r.Evaluate(owners.Input{Change: &c, Approvals: []owners.Approval{{User: "bob", SHA: "ABCDEF"}}})
		if st.Approved || st.Files[0].Approvers[0] != "root-admin" {
			t.Errorf("state = %+v", st.Files)
		}
	})
	t.Run("a rename without its old path counts its new path", func(t *testing.T) {
		c := *ch
		c.Files = []change.File{{Path: "operators/foo/x", Status: change.Renamed}}
		st := r.Evaluate(owners.Input{Change: &c, Approvals: []owners.Approval{{User: "bob", SHA: "ABCDEF"}}})
		if !st.Approved || len(st.Files) != 1 {
			t.Errorf("state = %+v", st.Files)
		}
	})
	t.Run("the input is not changed", func(t *testing.T) {
		c := *ch
		c.Files = []change.File{{Path: "b", Status: change.Modified}, {Path: "a", Status: change.Modified}}
		approvals := []owners.Approval{{User: "z", SHA: "2"}, {User: "a", SHA: "1"}}
		r.Evaluate(owners.Input{Change: &c, Approvals: approvals})
		if c.Files[0].Path != "b" || approvals[0].User != "z" {
			t.Error("Evaluate reordered its input")
		}
	})
}

// TestResolveOddPaths checks that paths as callers may spell them resolve,
// and that a path outside the tree ends the walk instead of looping.
func TestResolveOddPaths(t *testing.T) {
	r := load(t, prowTree())
	for p, want := range map[string][]string{
		"/operators/foo/x":     {"alice", "bob"},
		"./operators/foo/x":    {"alice", "bob"},
		"operators//foo/x":     {"alice", "bob"},
		"operators/foo/../x":   {"root-admin"},
		"../outside":           {"root-admin"},
		"":                     {"root-admin"},
		"operators/foo/":       {"alice", "bob"},
		"operators/foo/OWNERS": {"alice", "bob"},
	} {
		if got := r.Resolve(p).Approvers; !slices.Equal(got, want) {
			t.Errorf("Resolve(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestResolveRoot(t *testing.T) {
	r := load(t, prowTree())
	res := r.ResolveRoot("operators/foo/catalog.yaml")
	if !slices.Equal(res.Approvers, []string{"root-admin"}) || res.ApproverOwnersFile != "OWNERS" {
		t.Errorf("ResolveRoot = %+v", res)
	}
}

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"a/b":      "a/b",
		"./a//b/":  "a/b",
		"/a/b":     "a/b",
		`a\b`:      "a/b",
		"a/../b":   "b",
		"..":       "",
		"../a":     "",
		"a/../../": "",
		".":        "",
		"":         "",
	} {
		got, err := owners.CleanPath(in)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
