package render

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// The fixtures and goldens are opm's; see testdata/README.md.
const (
	bundleFixture = "testdata/foo-bundle"
	fbcFixture    = "testdata/fbcdir"
	// registryPlaceholder stands for the test registry's host:port in the
	// goldens recorded against a loopback registry.
	registryPlaceholder = "REGISTRY"
)

func readGolden(t *testing.T, name, host string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(data), registryPlaceholder, host)
}

func write(t *testing.T, format string, cfg *declcfg.DeclarativeConfig) string {
	t.Helper()
	var buf bytes.Buffer
	var err error
	switch format {
	case "json":
		err = WriteJSON(&buf, cfg)
	case "yaml":
		err = WriteYAML(&buf, cfg)
	default:
		t.Fatalf("unknown format %q", format)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func render(t *testing.T, opts Options, refs ...string) (*declcfg.DeclarativeConfig, error) {
	t.Helper()
	if opts.Keychain == nil {
		// Anonymous: tests never read the machine's registry credentials
		// or run its credential helpers.
		opts.Keychain = authn.NewMultiKeychain()
	}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r.Render(context.Background(), refs...)
}

// pushImages pushes the fixture bundle as an image labelled as the
// golden's was, plus an image whose only label says nothing about its type.
func pushImages(t *testing.T) string {
	t.Helper()
	host := registrytest.New(t).Host
	bundle := rendertest.Image(t, rendertest.BundleLabels("foo", "stable,fast"),
		rendertest.Layer(t, rendertest.DirEntries(t, bundleFixture, "")...))
	registrytest.Push(t, host+"/example/foo-bundle:v0.2.0", bundle)
	unlabeled := rendertest.Image(t, map[string]string{"foo": "bar"},
		rendertest.Layer(t, rendertest.Entry{Name: "hello.txt", Body: "hi\n"}))
	registrytest.Push(t, host+"/example/unlabeled:latest", unlabeled)
	registrytest.Push(t, host+"/example/nolabels:latest", rendertest.Image(t, nil))
	return host
}

func TestRenderMatchesOPM(t *testing.T) {
	host := pushImages(t)
	tests := []struct {
		name   string
		ref    string
		opts   Options
		format string
		golden string
	}{
		{"bundle directory as YAML", bundleFixture, Options{}, "yaml", "bundle-dir.yaml"},
		{"bundle directory as JSON", bundleFixture, Options{}, "json", "bundle-dir.json"},
		{"bundle directory migrated with an image template", bundleFixture, Options{
			MigrateLevel:     MigrateBundleObjectToMeta,
			ImageRefTemplate: "quay.io/example/{{.Package}}-bundle:v{{.Version}}",
		}, "json", "bundle-dir-migrated.json"},
		{"--migrate means all migrations", bundleFixture, Options{
			MigrateLevel:     MigrateAll,
			ImageRefTemplate: "quay.io/example/{{.Package}}-bundle:v{{.Version}}",
		}, "json", "bundle-dir-migrated.json"},
		// Without an image the migration does not apply.
		{"bundle directory without image is not migrated", bundleFixture, Options{
			MigrateLevel: MigrateBundleObjectToMeta,
		}, "json", "bundle-dir.json"},
		{"bundle image", host + "/example/foo-bundle:v0.2.0", Options{}, "yaml", "bundle-image.yaml"},
		{"catalog directory as JSON", fbcFixture, Options{}, "json", "fbc-dir.json"},
		{"catalog directory as YAML", fbcFixture, Options{}, "yaml", "fbc-dir.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := render(t, tt.opts, tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			got, want := write(t, tt.format, cfg), readGolden(t, tt.golden, host)
			if got != want {
				t.Errorf("output differs from %s\n--- got\n%s\n--- want\n%s", tt.golden, got, want)
			}
		})
	}
}

// opmError is the message of an opm render failure as the golden records
// it: after the log timestamp, without the final newline.
func opmError(t *testing.T, golden, host string) string {
	t.Helper()
	s := readGolden(t, golden, host)
	s = strings.TrimPrefix(s, "<date> <time> ")
	return strings.TrimSuffix(s, "\n")
}

func TestRenderErrors(t *testing.T) {
	host := pushImages(t)
	tests := []struct {
		name     string
		ref      string
		want     string // the whole message
		wantKind Kind
	}{
		{"unlabeled image", host + "/example/unlabeled:latest",
			opmError(t, "unlabeled-image.stderr", host), KindImage},
		{"non-canonical reference", "foo-bundle:v0.2.0",
			opmError(t, "noncanonical-ref.stderr", host), KindImage},
		{"image with no labels", host + "/example/nolabels:latest",
			`render reference "` + host + `/example/nolabels:latest": render "` + host + `/example/nolabels:latest": image type could not be determined: image has no labels`, KindImage},
		{"missing path is read as a reference", "./no-such-dir",
			`render reference "./no-such-dir": failed to pull image "./no-such-dir": invalid reference format`, KindImage},
		{"docker hub short name", "docker.io/foo:v1",
			`render reference "docker.io/foo:v1": failed to pull image "docker.io/foo:v1": repository name must be canonical`, KindImage},
		{"no tag", "quay.io/example/foo",
			`render reference "quay.io/example/foo": failed to pull image "quay.io/example/foo": Docker reference quay.io/example/foo has neither a tag nor a digest`, KindImage},
		{"plain file", bundleFixture + "/metadata/annotations.yaml",
			`render reference "testdata/foo-bundle/metadata/annotations.yaml": ref "testdata/foo-bundle/metadata/annotations.yaml" is not a directory: not allowed`, KindFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(t, Options{}, tt.ref)
			if err == nil {
				t.Fatal("Render() succeeded")
			}
			if err.Error() != tt.want {
				t.Errorf("Render() error =\n%s\nwant\n%s", err, tt.want)
			}
			var re *RefError
			if !errors.As(err, &re) || re.Ref != tt.ref || re.Kind != tt.wantKind {
				t.Errorf("Render() error = %#v, want a *RefError for %q of kind %q", err, tt.ref, tt.wantKind)
			}
		})
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{Options{MigrateLevel: "everything"}, `unknown migration level "everything"`},
		{Options{ImageRefTemplate: "{{.Package"}, `invalid image reference template: template: image-ref-template:1: unclosed action`},
	}
	for _, tt := range tests {
		if _, err := New(tt.opts); err == nil || err.Error() != tt.want {
			t.Errorf("New(%+v) error = %v, want %q", tt.opts, err, tt.want)
		}
	}
}

// copyDir copies a fixture tree so a test can change it.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The catalog image spreads the FBC fixture over three layers: a stale
// package that a whiteout deletes, a directory that an opaque whiteout
// empties before new content lands in it, and content outside the configs
// directory that must not appear. The result must be exactly what opm
// renders for the fixture directory.
func TestCatalogImage(t *testing.T) {
	host := registrytest.New(t).Host
	a, _ := os.ReadFile(filepath.Join(fbcFixture, "a.yaml"))
	b, _ := os.ReadFile(filepath.Join(fbcFixture, "sub/b.yaml"))
	stale := "schema: olm.package\nname: stale\n"
	layers := []rendertest.Entry{
		{Name: "configs/"},
		{Name: "configs/stale/"},
		{Name: "configs/stale/catalog.yaml", Body: stale},
		{Name: "configs/sub/"},
		{Name: "configs/sub/old.yaml", Body: "schema: olm.package\nname: old\n"},
		{Name: "configs/sub/b.yaml", Body: "schema: olm.package\nname: also-old\n"},
		{Name: "other/"},
		{Name: "other/elsewhere.yaml", Body: "schema: olm.package\nname: elsewhere\n"},
		{Name: "configsx/not-configs.yaml", Body: "schema: olm.package\nname: sibling\n"},
	}
	second := []rendertest.Entry{
		{Name: "configs/.wh.stale"},
		{Name: "configs/a.yaml", Body: string(a)},
	}
	third := []rendertest.Entry{
		// The new file comes before the opaque marker: a marker hides
		// only lower layers, never its own.
		{Name: "configs/sub/b.yaml", Body: string(b)},
		{Name: "configs/sub/.wh..wh..opq"},
	}
	img := rendertest.Image(t, map[string]string{ConfigsLabel: "/configs"},
		rendertest.Layer(t, layers...), rendertest.Layer(t, second...), rendertest.Layer(t, third...))
	ref := host + "/example/catalog:v1"
	registrytest.Push(t, ref, img)

	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			cfg, err := render(t, Options{}, ref)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := write(t, format, cfg), readGolden(t, "fbc-dir."+format, host); got != want {
				t.Errorf("output differs from fbc-dir.%s\n--- got\n%s\n--- want\n%s", format, got, want)
			}
		})
	}

	t.Run("configs directory deleted", func(t *testing.T) {
		gone := rendertest.Image(t, map[string]string{ConfigsLabel: "/configs"},
			rendertest.Layer(t, layers...), rendertest.Layer(t, rendertest.Entry{Name: ".wh.configs"}))
		ref := host + "/example/catalog:gone"
		registrytest.Push(t, ref, gone)
		_, err := render(t, Options{}, ref)
		var re *RefError
		if !errors.As(err, &re) || re.Kind != KindCatalogImage {
			t.Fatalf("Render() error = %v, want a catalog image error", err)
		}
		if !strings.Contains(err.Error(), `catalog directory "/configs"`) {
			t.Errorf("Render() error = %v, want it to name the configs directory", err)
		}
	})
}

// Rendering a catalog whose bundle carries olm.bundle.object properties
// with --migrate-level must give what migrating the bundle directory gives:
// the CSV comes from the bundle objects there.
func TestMigrateCatalog(t *testing.T) {
	template := "quay.io/example/{{.Package}}-bundle:v{{.Version}}"
	cfg, err := render(t, Options{ImageRefTemplate: template}, bundleFixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(write(t, "json", cfg)), 0o644); err != nil {
		t.Fatal(err)
	}
	migrated, err := render(t, Options{MigrateLevel: MigrateBundleObjectToMeta}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := write(t, "json", migrated), readGolden(t, "bundle-dir-migrated.json", ""); got != want {
		t.Errorf("migrated catalog differs\n--- got\n%s\n--- want\n%s", got, want)
	}
}

func TestRenderMergesInOrder(t *testing.T) {
	cfg, err := render(t, Options{}, fbcFixture, bundleFixture)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture catalog has foo.v0.1.0 and foo.v0.2.0; the bundle
	// directory adds a second foo.v0.2.0. Render does not validate.
	var names []string
	for _, b := range cfg.Bundles {
		names = append(names, b.Name+"@"+b.Image)
	}
	want := "foo.v0.1.0@quay.io/example/foo-bundle:v0.1.0 foo.v0.2.0@quay.io/example/foo-bundle:v0.2.0 foo.v0.2.0@"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("bundles = %s, want %s", got, want)
	}
}

func TestRenderCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Render(ctx, fbcFixture); !errors.Is(err, context.Canceled) {
		t.Errorf("Render() error = %v, want context.Canceled", err)
	}
}
