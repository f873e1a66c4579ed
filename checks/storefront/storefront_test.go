package storefront

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

const base = `---
schema: olm.package
name: foo
defaultChannel: stable
description: |

  Foo keeps your keys.
  More about it.
icon: {base64data: iVBORw0KGgo=, mediatype: image/png}
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v1.0.0
  - name: foo.v1.1.0
    replaces: foo.v1.0.0
---
schema: olm.bundle
package: foo
name: foo.v1.0.0
image: quay.io/x/foo:v1.0.0
properties:
  - type: olm.package
    value: {packageName: foo, version: 1.0.0}
---
schema: olm.bundle
package: foo
name: foo.v1.1.0
image: quay.io/x/foo:v1.1.0
properties:
  - type: olm.package
    value: {packageName: foo, version: 1.1.0}
  - type: olm.csv.metadata
    value: {displayName: Foo Operator, annotations: {categories: "Security, Storage"}}
`

func card(t *testing.T, catalog string) *Card {
	t.Helper()
	p, err := fbc.LoadPlacedWhole(context.Background(), fstest.MapFS{"foo/catalog.yaml": {Data: []byte(catalog)}})
	if err != nil || len(p.Unread) > 0 {
		t.Fatalf("the fixture does not load: %v %v", err, p.Unread)
	}
	return Of(&p.Config, "foo")
}

// TestCard: every field of the card, read by hand from the fixture: the
// head of the default channel is 1.1.0, whose CSV metadata names the
// display name and categories; the icon's 8 bytes are PNG's signature.
func TestCard(t *testing.T) {
	got := card(t, base).Fields()
	want := []Field{
		{"display name", "Foo Operator"},
		{"icon", "image/png, 8 bytes"},
		{"description", "Foo keeps your keys."},
		{"categories", "Security, Storage"},
		{"default channel", "stable"},
		{"channels", "stable: foo.v1.1.0"},
		{"deprecations", ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("card\n%q\nwant\n%q", got, want)
	}
}

// TestDiff: only what changed, before and after; a new package has every
// field that is set.
func TestDiff(t *testing.T) {
	head := base + "---\nschema: olm.deprecations\npackage: foo\nentries:\n  - reference: {schema: olm.bundle, name: foo.v1.0.0}\n    message: use 1.1.0\n"
	head = strings.Replace(head, "mediatype: image/png", "mediatype: image/webp", 1)
	got := Diff(card(t, base), card(t, head))
	want := []Change{
		{"icon", "image/png, 8 bytes", "image/webp, 8 bytes (OperatorHub shows image/png, image/jpeg, image/gif, image/svg+xml only)"},
		{"deprecations", "", "olm.bundle foo.v1.0.0: use 1.1.0"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("diff\n%q\nwant\n%q", got, want)
	}
	if got := Diff(card(t, base), card(t, base)); len(got) != 0 {
		t.Errorf("an unchanged card differs: %q", got)
	}
	if got := Diff(nil, card(t, base)); len(got) != 6 {
		t.Errorf("a new package: %d fields, want the 6 that are set: %q", len(got), got)
	}
}
