package fbc_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

// TestFindingPositions checks that each finding names the file and the line
// of the field at fault, in YAML and in JSON streams, and that problems in
// several files are all reported.
func TestFindingPositions(t *testing.T) {
	files := map[string]string{
		"a/catalog.yaml": `---
schema: olm.package
name: a
defaultChannel: stable
---
schema: olm.channel
package: a
name: stable
entries:
  - name: a.v1.0.0
  - name: a.v1.1.0
    replaces: a.v1.0.0
    skipRange: '>=v1'
---
schema: olm.bundle
package: a
name: a.v1.0.0
image: quay.io/example/a:v1.0.0
properties:
  - type: olm.package
    value:
      packageName: a
      version: v1.0.0
---
schema: olm.bundle
package: a
name: a.v1.1.0
image: quay.io/Example/a:v1.1.0
properties:
  - type: olm.package
    value:
      packageName: a
      version: 1.1.0
`,
		"b/catalog.json": `{"schema": "olm.package", "name": "b", "defaultChannel": "beta"}
{"schema": "olm.channel", "package": "b", "name": "stable",
 "entries": [{"name": "b.v1"}]}
{"schema": "olm.bundle", "package": "b", "name": "b.v1", "image": "quay.io/example/b:v1",
 "properties": [{"type": "olm.package", "value": {"packageName": "b", "version": "1.0.0"}}]}
`,
		"c/README.md": "# C\n\nprose\n",
	}
	res, err := fbc.Validate(context.Background(), mapFS(files), fbc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		got = append(got, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Rule))
	}
	// Load errors first, since what a file that does not load declared
	// is missing for the rest; then by file and line.
	want := []string{
		"c/README.md:3 L13",
		"a/catalog.yaml:11 M14",
		"a/catalog.yaml:23 C16",
		"a/catalog.yaml:28 C14",
		"b/catalog.json:1 M5",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s\n(full: %+v)", strings.Join(got, "\n"), strings.Join(want, "\n"), res.Findings)
	}
	// opm stops at the load error; everything else is catalogbot's extra.
	if want := "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type map[string]interface {} at offset 7 (indicated by <==)\n\"prose\" <=="; res.OPMMessage != want {
		t.Errorf("opm message %q, want %q", res.OPMMessage, want)
	}
}

// TestFollowOnAfterCause: a channel whose package was declared in a file
// that does not parse fails for that reason; its error comes after the
// syntax error that caused it, though its file sorts first.
func TestFollowOnAfterCause(t *testing.T) {
	files := map[string]string{
		"a/channel.yaml": "schema: olm.channel\npackage: z\nname: stable\nentries: []\n",
		"z/package.json": `{"schema": "olm.package", "name": "z", "defaultChannel": "stable"`,
	}
	res, err := fbc.Validate(context.Background(), mapFS(files), fbc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) < 2 || res.Findings[0].File != "z/package.json" || res.Findings[1].File != "a/channel.yaml" {
		t.Errorf("findings %+v; want the syntax error in z/package.json first, then its follow-on in a/channel.yaml", res.Findings)
	}
}
