package render

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// substitutesFixtures holds one bundle directory per case of a CSV whose
// version carries build metadata; see testdata/README.md.
const substitutesFixtures = "testdata/substitutes"

const substitutesTemplate = "quay.io/example/{{.Package}}-bundle:v{{.Version}}"

// A bundle with olm.substitutesFor and no spec.release takes its release
// from the build metadata of its version: the olm.package property, and
// the version the image reference template sees, drop the "+..." part.
func TestSubstitutesForRelease(t *testing.T) {
	tests := []struct {
		dir   string
		pkg   string // the olm.package value
		image string // the image the template makes
		err   string // the error after `render reference "<dir>": `
	}{
		{dir: "build-metadata",
			pkg:   `{"packageName":"widget","version":"1.4.0","release":"7.rebuild.2"}`,
			image: "quay.io/example/widget-bundle:v1.4.0"},
		// An explicit release wins, and the version is left whole.
		{dir: "spec-release",
			pkg:   `{"packageName":"widget","version":"1.4.0+7.rebuild.2","release":"9"}`,
			image: "quay.io/example/widget-bundle:v1.4.0+7.rebuild.2"},
		// Build metadata alone is only build metadata.
		{dir: "no-substitutes",
			pkg:   `{"packageName":"widget","version":"1.4.0+7.rebuild.2"}`,
			image: "quay.io/example/widget-bundle:v1.4.0+7.rebuild.2"},
		{dir: "empty-substitutes",
			pkg:   `{"packageName":"widget","version":"1.4.0+7.rebuild.2"}`,
			image: "quay.io/example/widget-bundle:v1.4.0+7.rebuild.2"},
		// A substitute must say which release it is.
		{dir: "no-build-metadata",
			err: `failed to derive properties: bundle "widget.v1.4.0-rebuild" error: no release version expressed as build metadata: "1.4.0"`},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			dir := filepath.Join(substitutesFixtures, tt.dir)
			cfg, err := render(t, Options{ImageRefTemplate: substitutesTemplate}, dir)
			if tt.err != "" {
				want := `render reference "` + dir + `": ` + tt.err
				if err == nil || err.Error() != want {
					t.Fatalf("Render() error =\n%v\nwant\n%s", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Bundles) != 1 {
				t.Fatalf("rendered %d bundles, want 1", len(cfg.Bundles))
			}
			b := cfg.Bundles[0]
			if got := propertyValues(b, property.TypePackage); !slices.Equal(got, []string{tt.pkg}) {
				t.Errorf("olm.package = %s, want %s", got, tt.pkg)
			}
			if b.Image != tt.image {
				t.Errorf("image = %q, want %q", b.Image, tt.image)
			}
		})
	}
}

// The whole output for the main case, as opm v1.65.0 renders it.
func TestSubstitutesForReleaseMatchesOPM(t *testing.T) {
	dir := filepath.Join(substitutesFixtures, "build-metadata")
	migrated := Options{MigrateLevel: MigrateBundleObjectToMeta, ImageRefTemplate: substitutesTemplate}
	tests := []struct {
		opts   Options
		format string
		golden string
	}{
		{Options{}, "json", "substitutes-build-metadata.json"},
		{Options{}, "yaml", "substitutes-build-metadata.yaml"},
		{migrated, "json", "substitutes-build-metadata-migrated.json"},
		{migrated, "yaml", "substitutes-build-metadata-migrated.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			cfg, err := render(t, tt.opts, dir)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := write(t, tt.format, cfg), readGolden(t, tt.golden, ""); got != want {
				t.Errorf("output differs from %s\n--- got\n%s\n--- want\n%s", tt.golden, got, want)
			}
		})
	}
}
