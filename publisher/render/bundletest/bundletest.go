// Package bundletest pushes the bundle images of publisher/render's
// testdata/truth to a test registry and writes the catalogs that name
// them, for the tests of bundle truthfulness (checks/truth) through the
// review, the command line, the App and the opm parity test.
//
// The bundles: a faithful bundle of package foo at 0.2.0, and one per
// way an image can differ from a blob written for the faithful one:
// another package, another version, a provided API missing, a required
// API added, another related image. Catalog writes the blob opm render
// makes of the faithful image, with its image (and the related image
// that repeats it) pointing at the variant's: the blob a pull request
// would hold to pass one image off as another.
package bundletest

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// Variants are the bundle directories, the faithful one first.
var Variants = []string{Faithful, "other-package", "other-version", "missing-api", "extra-required", "other-related"}

// Faithful is the bundle the blobs are written for.
const Faithful = "faithful"

// Dir is the directory that holds the Variants.
func Dir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("bundletest: cannot locate its own source")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "truth")
}

// RelatedImages are the images the faithful bundle names besides itself,
// under REGISTRY.
var RelatedImages = []string{"example/foo-init:v0.2.0", "example/foo-operand:v0.2.0", "example/foo-operator:v0.2.0", "example/foo-sidecar:v0.2.0"}

// Images are the variants pushed to one registry.
type Images struct {
	Host string
	// Refs are the variants' references, pinned by digest.
	Refs map[string]string
}

// Push builds every variant's image, with REGISTRY in its files standing
// for host, pushes it to host as truth/VARIANT:v0.2.0, and pushes an
// image to each of RelatedImages, so that the images check finds them.
func Push(t testing.TB, host string) *Images {
	t.Helper()
	im := &Images{Host: host, Refs: map[string]string{}}
	for _, v := range Variants {
		tag := host + "/truth/" + v + ":v0.2.0"
		d := registrytest.Push(t, tag, rendertest.BundleImage(t, filepath.Join(Dir(t), v), host))
		im.Refs[v] = host + "/truth/" + v + "@" + d.String()
	}
	for _, r := range RelatedImages {
		registrytest.Push(t, host+"/"+r, registrytest.RandomImage(t))
	}
	return im
}

// Blob is the blob opm render makes of the faithful image, migrated to
// olm.csv.metadata when level names a migration, pointing at variant's
// image. It renders with a renderer of its own, so that the test's
// renderer starts with nothing cached.
func (im *Images) Blob(t testing.TB, variant, level string) declcfg.Bundle {
	t.Helper()
	r, err := render.New(render.Options{MigrateLevel: level, Keychain: authn.NewMultiKeychain(), CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := r.RenderOne(context.Background(), im.Refs[Faithful])
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Bundles[0]
	ref := im.Refs[variant]
	b.Image = ref
	for i := range b.RelatedImages {
		if b.RelatedImages[i].Image == im.Refs[Faithful] {
			b.RelatedImages[i].Image = ref
		}
	}
	return b
}

// Catalog is a catalog of package foo whose one bundle is Blob(variant,
// level), as opm render writes YAML.
func (im *Images) Catalog(t testing.TB, variant, level string) string {
	t.Helper()
	b := im.Blob(t, variant, level)
	cfg := &declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "foo", DefaultChannel: "stable"}},
		Channels: []declcfg.Channel{{Schema: declcfg.SchemaChannel, Package: "foo", Name: "stable", Entries: []declcfg.ChannelEntry{{Name: b.Name}}}},
		Bundles:  []declcfg.Bundle{b},
	}
	var buf bytes.Buffer
	if err := render.WriteYAML(&buf, cfg); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// Stable replaces the registry host and the digests in s, so that a
// golden file holds what does not change from run to run.
func (im *Images) Stable(s string) string {
	for _, v := range Variants {
		s = strings.ReplaceAll(s, im.Refs[v], "REGISTRY/truth/"+v+"@DIGEST")
	}
	return strings.ReplaceAll(s, im.Host, "REGISTRY")
}
