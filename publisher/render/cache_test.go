package render

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// TestCacheRendersADigestOnce: a bundle image named by digest is pulled
// once per renderer, whatever the migration level asked for later, and a
// hit is finished as a pull is (the same bytes); one named by tag is pulled
// every time; a hit past a smaller MaxBytes fails as the pull would.
func TestCacheRendersADigestOnce(t *testing.T) {
	reg := registrytest.New(t)
	img := rendertest.BundleImage(t, filepath.Join("testdata", "truth", "faithful"), reg.Host)
	d := registrytest.Push(t, reg.Ref("truth/faithful:v1"), img)
	pinned, tagged := reg.Ref("truth/faithful@"+d.String()), reg.Ref("truth/faithful:v1")

	r, err := New(Options{Keychain: authn.NewMultiKeychain()})
	if err != nil {
		t.Fatal(err)
	}
	pulls := func() int { return reg.Count("GET", "blobs") }
	first, err := r.RenderRef(context.Background(), pinned)
	if err != nil {
		t.Fatal(err)
	}
	after := pulls()
	again, err := r.RenderRef(context.Background(), pinned)
	if err != nil {
		t.Fatal(err)
	}
	if pulls() != after || r.CacheHits() != 1 {
		t.Errorf("second render: %d more blob pulls, %d hits; want none and 1", pulls()-after, r.CacheHits())
	}
	if !reflect.DeepEqual(first, again) {
		t.Errorf("a hit renders otherwise than the pull:\n%+v\n%+v", first, again)
	}

	// Another migration level shares the entry: it is kept unfinished.
	migrated := r.WithMaxBytes(0)
	migrated.opts.MigrateLevel, migrated.steps = MigrateBundleObjectToMeta, 1
	m, err := migrated.RenderRef(context.Background(), pinned)
	if err != nil {
		t.Fatal(err)
	}
	if pulls() != after || !strings.Contains(string(m.Config.Bundles[0].Properties[len(m.Config.Bundles[0].Properties)-1].Type), "olm.csv.metadata") {
		t.Errorf("migrated hit: %d pulls, properties %v", pulls()-after, m.Config.Bundles[0].Properties)
	}
	// The hit was finished on a copy: the entry is left as it was.
	if third, err := r.RenderRef(context.Background(), pinned); err != nil || !reflect.DeepEqual(first, third) {
		t.Errorf("after a migrated hit the entry renders otherwise (%v)", err)
	}

	small := r.WithMaxBytes(10)
	var tl *TooLargeError
	if _, err := small.RenderRef(context.Background(), pinned); !errors.As(err, &tl) {
		t.Errorf("hit under MaxBytes 10: %v, want a *TooLargeError", err)
	}

	for range 2 {
		if _, err := r.RenderRef(context.Background(), tagged); err != nil {
			t.Fatal(err)
		}
	}
	if pulls() != after+4 {
		t.Errorf("a tag rendered twice pulled %d blobs, want 4 (config and layer, twice)", pulls()-after)
	}
}

// TestCacheBound: past its bound the cache lets the oldest entry go, and a
// renderer made with a negative bound keeps none.
func TestCacheBound(t *testing.T) {
	c := newBundleCache(1000)
	res := func(csv string) *result {
		return &result{cfg: &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{{Name: "x"}}}, csvJSON: []string{csv}}
	}
	c.put("a@sha256:1", res(strings.Repeat("a", 600)), 1)
	c.put("b@sha256:2", res(strings.Repeat("b", 600)), 1)
	if _, ok := c.get("a@sha256:1"); ok {
		t.Error("the oldest entry is still there past the bound")
	}
	if _, ok := c.get("b@sha256:2"); !ok {
		t.Error("the newest entry is gone")
	}
	r, err := New(Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.cache != nil || r.CacheHits() != 0 {
		t.Error("CacheBytes -1 keeps a cache")
	}
}
