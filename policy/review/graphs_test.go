package review

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
)

// fooV11 is foo's v1.1.0 bundle blob, replacing v1.0.0.
const fooV11 = `---
schema: olm.bundle
package: foo
name: foo.v1.1.0
image: quay.io/example/foo-bundle:v1.1.0
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 1.1.0
`

// TestGraphsInReports: the upgrade graphs the status comment draws are in
// the JSON document as data (package, channel, the Mermaid drawing, what
// the change added and removed) and in the text output as a summary per
// channel with the command that draws it.
func TestGraphsInReports(t *testing.T) {
	stableV11 := strings.Replace(fbctest.Foo, "  - name: foo.v1.0.0\n", "  - name: foo.v1.0.0\n  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n", 1) + fooV11
	fast := fbctest.Foo + "---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v1.0.0\n"
	cases := []struct {
		name       string
		base, head string // catalog/foo/catalog.yaml; "" leaves it as repo has it
	}{
		{name: "bundle-added", head: stableV11},
		{name: "channel-added", head: fast},
		{name: "bundle-removed", base: stableV11, head: fbctest.Foo},
		{name: "no-graph-change"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base, head := repo(), repo()
			path := "catalog/foo/catalog.yaml"
			if tc.base != "" {
				base[path] = &fstest.MapFile{Data: []byte(tc.base)}
			}
			if tc.head == "" {
				path = "catalog/foo/notes/README"
				head[path] = &fstest.MapFile{Data: []byte("more notes\n")}
			} else {
				head[path] = &fstest.MapFile{Data: []byte(tc.head)}
			}
			c := &change.Change{Number: 7, Author: "alice", BaseSHA: baseSHA, HeadSHA: headSHA,
				Files: []change.File{{Path: path, Status: change.Modified}}}
			o, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head})
			if err != nil {
				t.Fatal(err)
			}
			d := o.Decide(Forge{Local: true})
			var doc bytes.Buffer
			if err := checks.WriteJSON(&doc, o.Doc(d)); err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			if err := o.WriteText(&text, d, true); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("testdata", "graphs")
			checkstest.Golden(t, filepath.Join(dir, tc.name+".json"), doc.Bytes())
			checkstest.Golden(t, filepath.Join(dir, tc.name+".txt"), []byte(text.String()))
			if want := tc.head != ""; strings.Contains(doc.String(), `"graphs"`) != want ||
				strings.Contains(text.String(), "catalogbot graph catalog --package foo --channel ") != want {
				t.Errorf("graphs in the JSON and the text: want %v", want)
			}
		})
	}
}

// TestShellWord: the command a summary suggests is pasted into a shell, and
// names come from the pull request.
func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"catalog":        "catalog",
		"stable-v1.2":    "stable-v1.2",
		"":               "''",
		"a b":            "'a b'",
		"x;rm -rf /":     "'x;rm -rf /'",
		"it's":           `'it'\''s'`,
		"$(touch owned)": "'$(touch owned)'",
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}
