package fbc_test

import (
	"context"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

func TestImages(t *testing.T) {
	files := map[string]string{
		"foo/catalog.yaml": validCatalog + `---
schema: olm.bundle
package: foo
name: foo.v0.2.0
image: quay.io/example/foo-bundle:v0.2.0
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 0.2.0
relatedImages:
  - name: operator
    image: quay.io/example/foo@sha256:0000000000000000000000000000000000000000000000000000000000000000
  - image: quay.io/example/foo-bundle:v0.2.0
`,
		"bar/catalog.json": `{"schema":"olm.bundle","package":"bar","name":"bar.v1","image":"quay.io/example/bar:v1"}` + "\n",
	}
	{
		exact := false
		res, err := fbc.Validate(context.Background(), mapFS(files), fbc.Options{Images: true})
		if err != nil {
			t.Fatal(err)
		}
		want := []fbc.ImageRef{
			{Image: "quay.io/example/bar:v1", Kind: fbc.BundleImage, File: "bar/catalog.json", Line: 1, Package: "bar", Bundle: "bar.v1"},
			{Image: "quay.io/example/foo-bundle:v0.1.0", Kind: fbc.BundleImage, File: "foo/catalog.yaml", Line: 15, Package: "foo", Bundle: "foo.v0.1.0"},
			{Image: "quay.io/example/foo-bundle:v0.2.0", Kind: fbc.BundleImage, File: "foo/catalog.yaml", Line: 25, Package: "foo", Bundle: "foo.v0.2.0"},
			{Image: "quay.io/example/foo@sha256:0000000000000000000000000000000000000000000000000000000000000000", Kind: fbc.RelatedImage, Name: "operator", File: "foo/catalog.yaml", Line: 33, Package: "foo", Bundle: "foo.v0.2.0"},
			{Image: "quay.io/example/foo-bundle:v0.2.0", Kind: fbc.RelatedImage, File: "foo/catalog.yaml", Line: 34, Package: "foo", Bundle: "foo.v0.2.0"},
		}
		if len(res.Images) != len(want) {
			t.Fatalf("exact=%v: images %+v", exact, res.Images)
		}
		for i := range want {
			if res.Images[i] != want[i] {
				t.Errorf("exact=%v: image %d = %+v, want %+v", exact, i, res.Images[i], want[i])
			}
		}
	}
}
