package publish_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/publish"
)

// writeCatalog writes a one-package catalog whose bundle carries pad bytes
// of description, so that its catalogd view has about that size.
func writeCatalog(t *testing.T, dir string, pad int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "foo"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `---
schema: olm.package
name: foo
defaultChannel: stable
description: "` + strings.Repeat("x", pad) + `"
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v1.0.0
---
schema: olm.bundle
package: foo
name: foo.v1.0.0
image: quay.io/example/foo-bundle@sha256:` + strings.Repeat("1", 64) + `
properties:
  - type: olm.package
    value: {packageName: foo, version: 1.0.0}
`
	if err := os.WriteFile(filepath.Join(dir, "foo", "catalog.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPublishCatalogd: a publish states what catalogd will serve (the same
// bytes fbc.Served writes for the catalog), records it on the image, and
// warns when it grew past the thresholds since the previous image.
func TestPublishCatalogd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	target := "oci:" + filepath.Join(t.TempDir(), "out") + ":v1"

	writeCatalog(t, dir, 512<<10)
	first, err := publish.Publish(ctx, publish.Source{Dir: dir}, options(target))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	view, err := fbc.Served(ctx, os.DirFS(dir), &want)
	if err != nil {
		t.Fatal(err)
	}
	if first.Catalogd == nil || *first.Catalogd != view || view.Objects != 3 {
		t.Fatalf("first publish: catalogd view %+v, want %+v with 3 objects", first.Catalogd, view)
	}
	if first.PreviousCatalogdSize != -1 || first.CatalogdWarning() != "" {
		t.Errorf("first publish: previous size %d, warning %q; want -1 and none", first.PreviousCatalogdSize, first.CatalogdWarning())
	}
	img, err := publish.ReadPublished(ctx, target, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if img.Annotations[build.AnnCatalogdSize] != strconv.FormatInt(view.Size, 10) || img.Annotations[build.AnnCatalogdDigest] != view.Digest {
		t.Errorf("image annotations %v; want size %d and digest %s", img.Annotations, view.Size, view.Digest)
	}

	for _, tc := range []struct {
		pad  int
		warn bool
	}{
		{pad: 600 << 10, warn: false}, // +17%: below the ratio
		{pad: 3 << 20, warn: true},    // about x5, +2.4 MiB
		{pad: 3<<20 + 100, warn: false},
	} {
		prev, err := publish.ReadPublished(ctx, target, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		writeCatalog(t, dir, tc.pad)
		res, err := publish.Publish(ctx, publish.Source{Dir: dir}, options(target))
		if err != nil {
			t.Fatal(err)
		}
		wasSize, _ := strconv.ParseInt(prev.Annotations[build.AnnCatalogdSize], 10, 64)
		if res.PreviousCatalogdSize != wasSize {
			t.Errorf("pad %d: previous size %d, want the previous image's %d", tc.pad, res.PreviousCatalogdSize, wasSize)
		}
		if w := res.CatalogdWarning(); (w != "") != tc.warn || tc.warn && !strings.Contains(w, "grew from") {
			t.Errorf("pad %d: warning %q, want one: %v", tc.pad, w, tc.warn)
		}
	}

	// An image built before the annotations existed is rebuilt to its
	// own digest: without them.
	plain := options("oci:" + filepath.Join(t.TempDir(), "plain") + ":v1")
	plain.OmitCatalogdAnnotations = true
	res, err := publish.Publish(ctx, publish.Source{Dir: dir}, plain)
	if err != nil {
		t.Fatal(err)
	}
	img, err = publish.ReadPublished(ctx, plain.Image, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := img.Annotations[build.AnnCatalogdSize]; ok || res.Catalogd == nil {
		t.Errorf("omitted: annotations %v, view %+v; want no catalogd annotation and the view still reported", img.Annotations, res.Catalogd)
	}
}
