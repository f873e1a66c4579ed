package policy

import (
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"
)

func TestJudgesChanges(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"OWNERS", true},
		{"catalog/foo/OWNERS", true},
		{"OWNERS_ALIASES", true},
		{".catalogbot.yaml", true},
		{"operators/foo/ci.yaml", true},
		// Only the root's policy file is read.
		{"catalog/.catalogbot.yaml", false},
		{"catalog/foo/catalog.yaml", false},
		{"docs/OWNERS.md", false},
		// A ci.yaml names reviewers only directly in its package's
		// directory under operators/.
		{"operators/ci.yaml", false},
		{"operators/foo/1.0.0/ci.yaml", false},
		{"catalog/foo/ci.yaml", false},
	} {
		if got := JudgesChanges(tc.path); got != tc.want {
			t.Errorf("JudgesChanges(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestReferenceListIn(t *testing.T) {
	list := &fstest.MapFile{Data: []byte("schema: olm.catalog\n")}
	withList := fstest.MapFS{DefaultReferenceList: list}
	without := fstest.MapFS{"catalog/foo/index.yaml": &fstest.MapFile{}}
	// A directory named catalog.yaml holds files; it is not a list.
	dir := fstest.MapFS{DefaultReferenceList + "/x.yaml": &fstest.MapFile{}}
	for _, tc := range []struct {
		name  string
		named string // the policy's catalog.referenceList
		trees []fs.FS
		want  string
	}{
		{"on both sides", "", []fs.FS{withList, withList}, DefaultReferenceList},
		{"added by the change", "", []fs.FS{withList, without}, DefaultReferenceList},
		{"removed by the change", "", []fs.FS{without, withList}, DefaultReferenceList},
		{"one commit, as a publish reads it", "", []fs.FS{withList}, DefaultReferenceList},
		{"a tree not read is skipped", "", []fs.FS{nil, withList}, DefaultReferenceList},
		// Approvals once took catalog.yaml for a list whether or not it
		// existed; a repository without one has none.
		{"on neither side", "", []fs.FS{without, without}, ""},
		{"no trees", "", nil, ""},
		// A publish once took any catalog.yaml, a directory too.
		{"a directory", "", []fs.FS{dir}, ""},
		{"named by the policy", "lists/catalog.yaml", []fs.FS{without}, "lists/catalog.yaml"},
		// The policy's word stands even where catalog.yaml exists: the
		// root's catalog.yaml is then an ordinary file.
		{"named by the policy beside catalog.yaml", "lists/catalog.yaml", []fs.FS{withList}, "lists/catalog.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Catalog{ReferenceList: tc.named}
			if got := c.ReferenceListIn(tc.trees...); got != tc.want {
				t.Errorf("ReferenceListIn = %q, want %q", got, tc.want)
			}
			got := c.ReferenceListsIn(tc.trees...)
			if tc.want == "" && got != nil || tc.want != "" && !slices.Equal(got, []string{tc.want}) {
				t.Errorf("ReferenceListsIn = %q, want the same as ReferenceListIn", got)
			}
		})
	}
}
