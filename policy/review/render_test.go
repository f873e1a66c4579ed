package review

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
)

// TestStatusCommentQuotesNames: a path and a package name written to break
// out of their Markdown (a backtick that would end the code span, a '|'
// that would end the table cell, a link, a mention) are shown as written,
// in a span and a cell they cannot leave, and nothing invisible is raw.
func TestStatusCommentQuotesNames(t *testing.T) {
	base, head := repo(), repo()
	path := "catalog/foo/x` [pwn](evil.example) |\u202e.yaml"
	pkg := "foo](https://evil.example)@root-owner"
	head[path] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(fbctest.Foo, "name: foo\n", "name: "+pkg+"\n"))}
	c := &change.Change{Number: 7, Author: "mallory", BaseSHA: baseSHA, HeadSHA: headSHA,
		Files: []change.File{{Path: path, Status: change.Added}}}
	o, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head})
	if err != nil {
		t.Fatal(err)
	}
	text := o.StatusComment(o.Decide(Forge{Local: true}))
	wantSpan := "``catalog/foo/x` [pwn](evil.example) \\|\\u202e.yaml``"
	if !strings.Contains(text, wantSpan) {
		t.Errorf("the status comment does not quote the path as %s:\n%s", wantSpan, text)
	}
	wantText := `package foo\](https://evil.example)\@root-owner`
	if !strings.Contains(text, wantText) {
		t.Errorf("the status comment does not show the package name as %s:\n%s", wantText, text)
	}
	for _, raw := range []string{"\u202e", "added in catalog/foo/x` [pwn]", "](https://evil.example)@root-owner"} {
		if strings.Contains(text, raw) {
			t.Errorf("the status comment holds %q raw:\n%s", raw, text)
		}
	}
}
