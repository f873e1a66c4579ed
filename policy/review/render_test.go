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

// TestStatusCommentCodes: the status comment lists each reason against
// merging after its code, as the check run's text does, so that the two
// say the same things the same way.
func TestStatusCommentCodes(t *testing.T) {
	base, head := repo(), repo()
	head["catalog/foo/catalog.yaml"] = &fstest.MapFile{Data: []byte(fbctest.Foo + "\n")}
	c := &change.Change{Number: 7, Author: "mallory", BaseSHA: baseSHA, HeadSHA: headSHA,
		Files: []change.File{{Path: "catalog/foo/catalog.yaml", Status: change.Modified}}}
	o, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head})
	if err != nil {
		t.Fatal(err)
	}
	d := o.Decide(Forge{Local: true})
	if len(d.Blocks) == 0 {
		t.Fatal("a change by a non-owner is mergeable")
	}
	text := o.StatusComment(d)
	_, list, ok := strings.Cut(text, "**Not merging yet:**\n")
	if !ok {
		t.Fatalf("no reasons in the status comment:\n%s", text)
	}
	run := BlockedText(d.Blocks)
	for _, bl := range d.Blocks {
		line := "- `" + string(bl.Code) + "`: " + bl.Text + "\n"
		if !strings.Contains(list, line) {
			t.Errorf("the status comment lacks %q:\n%s", line, list)
		}
		if !strings.Contains(run, line) {
			t.Errorf("the check run's text lacks %q:\n%s", line, run)
		}
	}
}
