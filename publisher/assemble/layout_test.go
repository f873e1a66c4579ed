package assemble

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// A reference to an image in an OCI layout is resolved from the layout's
// index.json, so the cache and the recorded digest work offline too; a
// re-tagged image is noticed like a moved registry tag.
func TestLayoutReference(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "layout")
	write := func(rev string) string {
		t.Helper()
		img := rendertest.Image(t, map[string]string{
			"operators.operatorframework.io.index.configs.v1": "/configs",
			"revision": rev,
		}, rendertest.Layer(t, rendertest.DirEntries(t, "../../testdata/catalogs/valid/cert-rotator", "configs/cert-rotator")...))
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		p, err := layout.Write(dir, empty.Index)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "v1"})); err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	f, findings := catalogyaml.Parse("catalog.yaml", []byte("name: c\nreferences:\n- name: cert\n  image: oci:"+dir+":v1\n"))
	if len(findings) > 0 {
		t.Fatal(findings)
	}
	a, err := New(Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	for i, tc := range []struct {
		rev        string
		wantCached bool
	}{{"1", false}, {"1", true}, {"2", false}} {
		want := write(tc.rev)
		res, err := a.Assemble(context.Background(), f, out)
		if err != nil {
			t.Fatal(err)
		}
		r := res.References[0]
		if r.Digest != want || r.Cached != tc.wantCached {
			t.Errorf("run %d: digest %s cached %v, want %s cached %v", i+1, r.Digest, r.Cached, want, tc.wantCached)
		}
	}
}
