package checks

import "testing"

func TestClosest(t *testing.T) {
	formats := []string{"text", "json", "sarif", "github", "markdown"}
	for _, tc := range []struct {
		s    string
		want string
	}{
		{"jsno", "json"},     // neighbours swapped
		{"jso", "json"},      // one left out
		{"sarf", "sarif"},    // one left out
		{"githbu", "github"}, // swapped at the end
		{"txet", "text"},
		{"json", "json"},
		{"yaml", ""}, // not a typo of any
		{"xml", ""},  // two edits from "yaml", but another word
		{"", ""},
		{"markdwon", "markdown"},
	} {
		if got := Closest(tc.s, formats); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
	if got, want := DidYouMean("scrach", []string{"opm", "scratch"}), ` (did you mean "scratch"?)`; got != want {
		t.Errorf("DidYouMean = %q, want %q", got, want)
	}
	if got := DidYouMean("quay.io/x", []string{"opm", "scratch"}); got != "" {
		t.Errorf("DidYouMean of no typo = %q", got)
	}
}
