package build_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
)

const fixture = "testdata/catalog"

func mustBuild(t testing.TB, dir string, o build.Options) *build.Result {
	t.Helper()
	res, err := build.Build(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// configsLayer is the last layer of img, the one the build adds.
func configsLayer(t testing.TB, img v1.Image) v1.Layer {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	return layers[len(layers)-1]
}

func TestReproducible(t *testing.T) {
	want := mustBuild(t, fixture, build.Options{Base: build.BaseScratch}).Digest

	// The same catalog written in another order, with other mtimes and
	// modes, as another checkout would have it.
	dir := t.TempDir()
	files := []string{"foo/catalog.yaml", "bar/catalog.json"}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(fixture, f))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		when := time.Date(2024, 5, 6, 7, 8, 9, 123, time.UTC)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustBuild(t, dir, build.Options{Base: build.BaseScratch}).Digest; got != want {
		t.Errorf("same catalog, other order/mtimes/modes: digest %s, want %s", got, want)
	}
	if got := mustBuild(t, fixture, build.Options{Base: build.BaseScratch}).Digest; got != want {
		t.Errorf("second build: digest %s, want %s", got, want)
	}

	// Each real input changes the digest.
	changed := map[string]build.Options{
		"epoch":      {Base: build.BaseScratch, Epoch: time.Unix(1700000000, 0)},
		"platform":   {Base: build.BaseScratch, Platforms: []string{"linux/arm64"}},
		"references": {Base: build.BaseScratch, References: map[string]string{"quay.io/x/y:v1": "sha256:00"}},
	}
	for name, o := range changed {
		if got := mustBuild(t, fixture, o).Digest; got == want {
			t.Errorf("%s: digest unchanged", name)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "foo", "catalog.yaml"), []byte("---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := mustBuild(t, dir, build.Options{Base: build.BaseScratch}).Digest; got == want {
		t.Error("changed content: digest unchanged")
	}
}

// TestLayerContent pins the exact tar entries of the /configs layer:
// sorted, directories included, fixed modes, root owner without names,
// and the epoch (SOURCE_DATE_EPOCH style) as every mtime.
func TestLayerContent(t *testing.T) {
	tests := []struct {
		name   string
		epoch  time.Time
		golden string
	}{
		{"unix-epoch", time.Time{}, "testdata/layer.golden"},
		{"source-date-epoch", time.Unix(1700000000, 0), "testdata/layer-epoch.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, fixture, dir)
			// On-disk permissions must not leak into the image.
			if err := os.Chmod(filepath.Join(dir, "foo", "catalog.yaml"), 0o775); err != nil {
				t.Fatal(err)
			}
			res := mustBuild(t, dir, build.Options{Base: build.BaseScratch, Epoch: tt.epoch})
			l := configsLayer(t, res.Image)
			checkstest.Golden(t, tt.golden, []byte(tarListing(t, l)))
			if mt, _ := l.MediaType(); mt != types.OCILayer {
				t.Errorf("layer media type %s, want %s", mt, types.OCILayer)
			}
		})
	}
}

// TestLayerFollowsFileLinks stores a link to a file as the file, so the
// image has the content opm reads from the checkout.
func TestLayerFollowsFileLinks(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, fixture, dir)
	want := mustBuild(t, dir, build.Options{Base: build.BaseScratch}).Digest
	outside := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.Rename(filepath.Join(dir, "bar", "catalog.json"), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "bar", "catalog.json")); err != nil {
		t.Skip(err)
	}
	if got := mustBuild(t, dir, build.Options{Base: build.BaseScratch}).Digest; got != want {
		t.Errorf("with a link: digest %s, want %s", got, want)
	}
}

func TestLayerRefusesDirectoryLink(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, fixture, dir)
	if err := os.Symlink("foo", filepath.Join(dir, "linked")); err != nil {
		t.Skip(err)
	}
	if _, err := build.Build(context.Background(), dir, build.Options{Base: build.BaseScratch}); err == nil {
		t.Fatal("a link to a directory was packed")
	}
}

func TestBases(t *testing.T) {
	reg := newRegistry(t)
	opmDigest := registrytest.Push(t, reg.Ref("operator-framework/opm:v1"), baseImage(t, "linux/amd64"))
	otherDigest := registrytest.Push(t, reg.Ref("example/base:v2"), baseImage(t, "linux/s390x"))
	refs := map[string]string{"quay.io/example/foo-bundle:v0.1.0": "sha256:1111"}

	tests := []struct {
		name       string
		opts       build.Options
		entrypoint []string
		cmd        []string
		labels     map[string]string
		layers     int
		platform   string
		anns       map[string]string
	}{{
		name:       "opm",
		opts:       build.Options{Base: build.BaseOPM, OPMImage: reg.Ref("operator-framework/opm:v1"), References: refs},
		entrypoint: []string{"/bin/opm"},
		// The base has no opm to build the cache with (TestServeCache).
		cmd:      []string{"serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"},
		labels:   map[string]string{"vendor": "base", build.ConfigsLabel: "/configs"},
		layers:   2,
		platform: "linux/amd64",
		anns: map[string]string{
			build.AnnBaseName:                      reg.Ref("operator-framework/opm:v1"),
			build.AnnBaseDigest:                    opmDigest.String(),
			"org.opencontainers.image.base.name":   reg.Ref("operator-framework/opm:v1"),
			"org.opencontainers.image.base.digest": opmDigest.String(),
			build.AnnReferences:                    `{"quay.io/example/foo-bundle:v0.1.0":"sha256:1111"}`,
		},
	}, {
		name:     "scratch",
		opts:     build.Options{Base: build.BaseScratch},
		labels:   map[string]string{build.ConfigsLabel: "/configs"},
		layers:   1,
		platform: "linux/amd64",
	}, {
		name:       "image",
		opts:       build.Options{Base: reg.Ref("example/base:v2")},
		entrypoint: []string{"/bin/sh"},
		labels:     map[string]string{"vendor": "base", build.ConfigsLabel: "/configs"},
		layers:     2,
		platform:   "linux/s390x",
		anns: map[string]string{
			build.AnnBaseName:                      reg.Ref("example/base:v2"),
			build.AnnBaseDigest:                    otherDigest.String(),
			"org.opencontainers.image.base.name":   reg.Ref("example/base:v2"),
			"org.opencontainers.image.base.digest": otherDigest.String(),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustBuild(t, fixture, tt.opts)
			if res.Index != nil {
				t.Fatal("built an index, want an image")
			}
			cfg, err := res.Image.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			c := cfg.Config
			if !slices.Equal(c.Entrypoint, tt.entrypoint) || !slices.Equal(c.Cmd, tt.cmd) {
				t.Errorf("entrypoint %q cmd %q, want %q %q", c.Entrypoint, c.Cmd, tt.entrypoint, tt.cmd)
			}
			if !mapsEqual(c.Labels, tt.labels) {
				t.Errorf("labels %v, want %v", c.Labels, tt.labels)
			}
			if p := cfg.Platform().String(); p != tt.platform {
				t.Errorf("platform %s, want %s", p, tt.platform)
			}
			if !cfg.Created.Time.Equal(time.Unix(0, 0)) {
				t.Errorf("created %s, want the epoch", cfg.Created)
			}
			if n := len(cfg.History); n != tt.layers || !cfg.History[n-1].Created.Time.Equal(time.Unix(0, 0)) {
				t.Errorf("history %+v, want %d entries ending at the epoch", cfg.History, tt.layers)
			}
			m, err := res.Image.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Layers) != tt.layers || len(cfg.RootFS.DiffIDs) != tt.layers {
				t.Errorf("%d layers and %d diff IDs, want %d", len(m.Layers), len(cfg.RootFS.DiffIDs), tt.layers)
			}
			if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
				t.Errorf("media types %s / %s, want OCI", m.MediaType, m.Config.MediaType)
			}
			for _, l := range m.Layers {
				if l.MediaType != types.OCILayer {
					t.Errorf("layer %s has media type %s, want %s", l.Digest, l.MediaType, types.OCILayer)
				}
			}
			if !mapsEqual(m.Annotations, tt.anns) {
				t.Errorf("annotations %v, want %v", m.Annotations, tt.anns)
			}
		})
	}
}

func TestIndexBase(t *testing.T) {
	reg := newRegistry(t)
	base := reg.Ref("operator-framework/opm:multi")
	baseDigest := registrytest.PushIndex(t, base, baseIndex(t, "linux/amd64", "linux/arm64"))

	tests := []struct {
		name      string
		platforms []string
		want      []string // platforms of the result; one means an image
		err       bool
	}{
		{name: "all", want: []string{"linux/amd64", "linux/arm64"}},
		{name: "reordered", platforms: []string{"linux/arm64", "linux/amd64"}, want: []string{"linux/amd64", "linux/arm64"}},
		{name: "one", platforms: []string{"linux/arm64"}, want: []string{"linux/arm64"}},
		{name: "missing", platforms: []string{"linux/ppc64le"}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := build.Build(context.Background(), fixture, build.Options{OPMImage: base, Platforms: tt.platforms})
			if tt.err {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.want) == 1 {
				cfg, err := res.Image.ConfigFile()
				if err != nil {
					t.Fatal(err)
				}
				if p := cfg.Platform().String(); p != tt.want[0] {
					t.Errorf("platform %s, want %s", p, tt.want[0])
				}
				return
			}
			if res.Index == nil {
				t.Fatal("built an image, want an index")
			}
			m, err := res.Index.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			if m.MediaType != types.OCIImageIndex || m.Annotations[build.AnnBaseDigest] != baseDigest.String() {
				t.Errorf("index %s annotated %v, want OCI with base digest %s", m.MediaType, m.Annotations, baseDigest)
			}
			var got []string
			for _, d := range m.Manifests {
				got = append(got, d.Platform.String())
				img, err := res.Index.Image(d.Digest)
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := img.ConfigFile()
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Config.Labels[build.ConfigsLabel] != "/configs" || cfg.Platform().String() != d.Platform.String() {
					t.Errorf("%s: labels %v, config platform %s", d.Platform, cfg.Config.Labels, cfg.Platform())
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("index platforms %v, want %v", got, tt.want)
			}
		})
	}

	// An index build is reproducible too.
	a := mustBuild(t, fixture, build.Options{OPMImage: base})
	b := mustBuild(t, fixture, build.Options{OPMImage: base})
	if a.Digest != b.Digest {
		t.Errorf("index digests differ: %s, %s", a.Digest, b.Digest)
	}
}

func TestSingleBasePlatform(t *testing.T) {
	reg := newRegistry(t)
	base := reg.Ref("example/base:amd64")
	registrytest.Push(t, base, baseImage(t, "linux/amd64"))
	if _, err := build.Build(context.Background(), fixture, build.Options{Base: base, Platforms: []string{"linux/amd64"}}); err != nil {
		t.Errorf("matching platform: %v", err)
	}
	if _, err := build.Build(context.Background(), fixture, build.Options{Base: base, Platforms: []string{"linux/arm64"}}); err == nil {
		t.Error("built an arm64 catalog on an amd64 base")
	}
}

func TestScratchPlatforms(t *testing.T) {
	res := mustBuild(t, fixture, build.Options{Base: build.BaseScratch, Platforms: []string{"linux/amd64", "linux/arm64"}})
	if res.Index == nil {
		t.Fatal("two platforms built an image, want an index")
	}
	m, err := res.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 {
		t.Errorf("%d manifests, want 2", len(m.Manifests))
	}
}

func TestOptionErrors(t *testing.T) {
	tests := map[string]build.Options{
		"bad platform":       {Base: build.BaseScratch, Platforms: []string{"linux"}},
		"duplicate platform": {Base: build.BaseScratch, Platforms: []string{"linux/amd64", "linux/amd64"}},
		"bad base":           {Base: "Not A Reference"},
	}
	for name, o := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := build.Build(context.Background(), fixture, o); err == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := build.Build(context.Background(), "testdata/missing", build.Options{Base: build.BaseScratch}); err == nil {
		t.Error("missing catalog: no error")
	}
}

func mapsEqual(a, b map[string]string) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return string(ja) == string(jb)
}

// TestBaseDigest rebuilds on a base whose tag has moved: pinned to the
// digest it was built on, the build gives the first digest again, with
// the base's name as given.
func TestBaseDigest(t *testing.T) {
	reg := newRegistry(t)
	base := reg.Ref("example/base:v1")
	was := registrytest.Push(t, base, baseImage(t, "linux/amd64"))
	first := mustBuild(t, fixture, build.Options{Base: base})
	registrytest.Push(t, base, baseImage(t, "linux/amd64"))
	moved := mustBuild(t, fixture, build.Options{Base: base})
	if moved.Digest == first.Digest || moved.BaseDigest == was.String() {
		t.Fatalf("the base moved, and the build did not: %s on %s", moved.Digest, moved.BaseDigest)
	}
	pinned := mustBuild(t, fixture, build.Options{Base: base, BaseDigest: was.String()})
	if pinned.Digest != first.Digest || pinned.BaseName != base || pinned.BaseDigest != was.String() {
		t.Fatalf("pinned: %s on %s@%s, want %s on %s@%s", pinned.Digest, pinned.BaseName, pinned.BaseDigest, first.Digest, base, was)
	}
}
