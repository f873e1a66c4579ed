package policy

import "testing"

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
