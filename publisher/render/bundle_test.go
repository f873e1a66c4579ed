package render

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// bundleVariant copies the fixture bundle and applies change to the copy:
// each key is a path under the bundle, and its value the new content, or ""
// to delete the file.
func bundleVariant(t *testing.T, change map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "foo-bundle")
	copyDir(t, bundleFixture, dir)
	for name, content := range change {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(bundleFixture, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const (
	csvFile = "manifests/foo.clusterserviceversion.yaml"
	crdFile = "manifests/foo.crd.yaml"
)

// Variants that opm renders exactly as the fixture: the output must stay
// byte-identical to the golden.
func TestBundleVariantsMatchGolden(t *testing.T) {
	tests := []struct {
		name   string
		change map[string]string
	}{
		{"manifests as JSON", map[string]string{
			crdFile:                        "",
			csvFile:                        "",
			"manifests/foo.crd.json":       yamlToJSON(t, fixture(t, crdFile)),
			"manifests/foo.csv.json":       yamlToJSON(t, fixture(t, csvFile)),
			"metadata/annotations.yaml":    "",
			"metadata/annotations.json":    yamlToJSON(t, fixture(t, "metadata/annotations.yaml")),
			"metadata/dependencies.yaml":   "",
			"metadata/1-dependencies.json": "  " + yamlToJSON(t, fixture(t, "metadata/dependencies.yaml")),
		}},
		{"only the first document of a file counts", map[string]string{
			crdFile: "---\n" + fixture(t, crdFile) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ignored\n",
		}},
		{"a second CSV is dropped", map[string]string{
			"manifests/zz.csv.yaml": strings.Replace(fixture(t, csvFile), "foo.v0.2.0", "foo.v9.9.9", 1),
		}},
		{"dot files, directories and objects without a kind are skipped", map[string]string{
			"manifests/.hidden.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hidden\n",
			"manifests/sub/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nested\n",
			"manifests/nokind.yaml":       "apiVersion: v1\nmetadata:\n  name: nokind\n",
			"manifests/notyaml.txt":       "{{{ not yaml",
			"metadata/README.md":          "# just docs\n",
			"metadata/zz-annotations.yml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: other\n",
		}},
	}
	want := readGolden(t, "bundle-dir.json", "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := render(t, Options{}, bundleVariant(t, tt.change))
			if err != nil {
				t.Fatal(err)
			}
			if got := write(t, "json", cfg); got != want {
				t.Errorf("output differs from bundle-dir.json\n--- got\n%s", got)
			}
		})
	}
}

func yamlToJSON(t *testing.T, y string) string {
	t.Helper()
	var o object
	if err := decodeFirst([]byte(y), &o); err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestBundleErrors(t *testing.T) {
	csv := fixture(t, csvFile)
	tests := []struct {
		name   string
		change map[string]string
		opts   Options
		want   string // the error after `render reference "<dir>": `
	}{
		{"no manifests", map[string]string{csvFile: "", crdFile: ""},
			Options{}, "no bundle objects found"},
		{"no CSV", map[string]string{csvFile: ""},
			Options{}, "no csv in bundle"},
		{"no annotations", map[string]string{"metadata/annotations.yaml": ""},
			Options{}, "Could not find annotations file"},
		{"annotations without the bundle keys", map[string]string{
			"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n"},
			Options{}, "Could not find annotations file"},
		{"owned CRD missing", map[string]string{crdFile: ""},
			Options{}, "error checking provided apis in bundle foo.v0.2.0: couldn't find foo.example.com/v1/Foo (foos) in bundle. found: map[]"},
		{"owned CRD version missing", map[string]string{
			csvFile: strings.Replace(csv, "        version: v1\n        kind: Foo", "        version: v2\n        kind: Foo", 1)},
			Options{}, "error checking provided apis in bundle foo.v0.2.0: couldn't find foo.example.com/v2/Foo (foos) in bundle. found: map[foo.example.com/v1/Foo (foos):{} foo.example.com/v1alpha1/Foo (foos):{}]"},
		{"owned CRD name without group", map[string]string{
			csvFile: strings.Replace(csv, "- name: foos.foo.example.com", "- name: foos", 1)},
			Options{}, "error checking provided apis in bundle foo.v0.2.0: couldn't parse plural.group from crd name: foos"},
		{"required CRD name without group", map[string]string{
			csvFile: strings.Replace(csv, "- name: bazs.baz.example.com", "- name: bazs", 1)},
			Options{}, `get properties for bundle "foo.v0.2.0": get required apis: couldn't parse plural.group from crd name: bazs`},
		{"malformed gvk property", map[string]string{
			"metadata/properties.yaml": "properties:\n- type: olm.gvk\n  value: nope\n"},
			Options{}, `get properties for bundle "foo.v0.2.0": parse property[0] of type "olm.gvk": json: cannot unmarshal string into Go value of type property.GVK`},
		{"release of the wrong type", map[string]string{
			csvFile: strings.Replace(csv, "  version: 0.2.0\n", "  version: 0.2.0\n  release: [1]\n", 1)},
			Options{}, "failed to derive properties: release field must be a string or number"},
		{"template that does not execute", nil,
			Options{ImageRefTemplate: "{{.Nope}}"}, `failed templating image reference from bundle for "<dir>": template: image-ref-template:1:2: executing "image-ref-template" at <.Nope>: can't evaluate field Nope in type render.templateData`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := bundleVariant(t, tt.change)
			_, err := render(t, tt.opts, dir)
			want := `render reference "` + dir + `": ` + strings.ReplaceAll(tt.want, "<dir>", dir)
			if err == nil || err.Error() != want {
				t.Fatalf("Render() error =\n%v\nwant\n%s", err, want)
			}
			var re *RefError
			if !errors.As(err, &re) || re.Kind != KindBundleDir {
				t.Errorf("Render() error kind = %v, want %q", err, KindBundleDir)
			}
		})
	}
}

// renderBundle renders a bundle variant to its one blob.
func renderBundle(t *testing.T, opts Options, change map[string]string) declcfg.Bundle {
	t.Helper()
	cfg, err := render(t, opts, bundleVariant(t, change))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Bundles) != 1 {
		t.Fatalf("rendered %d bundles, want 1", len(cfg.Bundles))
	}
	return cfg.Bundles[0]
}

// propertyValues lists the raw values of a bundle's properties of one type.
func propertyValues(b declcfg.Bundle, typ string) []string {
	var out []string
	for _, p := range b.Properties {
		if p.Type == typ {
			out = append(out, string(p.Value))
		}
	}
	return out
}

// These follow operator-registry's code paths where the fixture does not
// reach; each expectation is what that code computes.
func TestBundleProperties(t *testing.T) {
	csv := fixture(t, csvFile)
	tests := []struct {
		name   string
		change map[string]string
		opts   Options
		typ    string
		want   []string
		image  string
	}{
		{"the CSV's olm.package property wins over the annotations",
			map[string]string{csvFile: strings.Replace(csv,
				`[{"type":"olm.label","value":{"label":"hello"}}]`,
				`[{"type":"olm.package","value":{"packageName":"foo","version":"9.9.9"}}]`, 1)},
			// The image template sees the first olm.package, which is the
			// annotations' one, while the blob keeps the last.
			Options{ImageRefTemplate: "example.com/foo:{{.Version}}"},
			"olm.package", []string{`{"packageName":"foo","version":"9.9.9"}`}, "example.com/foo:0.2.0"},
		{"a numeric release is printed as a string",
			map[string]string{csvFile: strings.Replace(csv, "  version: 0.2.0\n", "  version: 0.2.0\n  release: 2\n", 1)},
			Options{}, "olm.package", []string{`{"packageName":"foo","version":"0.2.0","release":"2"}`}, ""},
		{"v1beta1 CRDs provide spec.version too",
			map[string]string{crdFile: "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.foo.example.com\nspec:\n  group: foo.example.com\n  version: v1\n  names:\n    kind: Foo\n    plural: foos\n  versions:\n  - name: v1beta2\n"},
			Options{}, "olm.gvk", []string{
				`{"group":"foo.example.com","kind":"Foo","version":"v1"}`,
				`{"group":"foo.example.com","kind":"Foo","version":"v1beta2"}`,
			}, ""},
		{"API services are provided and required",
			map[string]string{csvFile: strings.Replace(csv, "  customresourcedefinitions:\n",
				"  apiservicedefinitions:\n    owned:\n    - {name: widgets, group: w.example.com, version: v1, kind: Widget}\n    required:\n    - {name: gadgets, group: g.example.com, version: v2, kind: Gadget}\n  customresourcedefinitions:\n", 1)},
			Options{}, "olm.gvk.required", []string{
				`{"group":"bar.example.com","kind":"Bar","version":"v1"}`,
				`{"group":"baz.example.com","kind":"Baz","version":"v1"}`,
				`{"group":"g.example.com","kind":"Gadget","version":"v2"}`,
			}, ""},
		// Values from YAML metadata files went through json.Marshal, which
		// escapes HTML; opm prints those bytes unchanged.
		{"dependency types other than package and gvk pass through raw",
			map[string]string{"metadata/dependencies.yaml": "dependencies:\n- type: olm.constraint\n  value:\n    failureMessage: needs a<b\n    cel: {rule: 'true'}\n- type: olm.constraint\n  value:\n    failureMessage: needs a<b\n    cel: {rule: 'true'}\n"},
			Options{}, "olm.constraint", []string{
				`{"cel":{"rule":"true"},"failureMessage":"needs a\u003cb"}`,
				`{"cel":{"rule":"true"},"failureMessage":"needs a\u003cb"}`,
			}, ""},
		{"properties are deduplicated by type and raw value",
			map[string]string{"metadata/properties.yaml": "properties:\n- {type: olm.label, value: {label: hello}}\n- {type: olm.label, value: {label: hello}}\n- {type: olm.label, value: {label: bye}}\n"},
			Options{}, "olm.label", []string{`{"label":"bye"}`, `{"label":"hello"}`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := renderBundle(t, tt.opts, tt.change)
			got := propertyValues(b, tt.typ)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("%s properties =\n%s\nwant\n%s", tt.typ, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if b.Image != tt.image {
				t.Errorf("image = %q, want %q", b.Image, tt.image)
			}
		})
	}
}

func TestRelatedImages(t *testing.T) {
	tests := []struct {
		name     string
		template string
		want     []string
	}{
		{"no image", "", []string{
			"/quay.io/example/foo-init:v0.2.0", "operand/quay.io/example/foo-operand:v0.2.0",
			"operator/quay.io/example/foo-operator:v0.2.0", "/quay.io/example/foo-sidecar:v0.2.0"}},
		{"bundle image already related", "quay.io/example/foo-operand:v0.2.0", []string{
			"/quay.io/example/foo-init:v0.2.0", "operand/quay.io/example/foo-operand:v0.2.0",
			"operator/quay.io/example/foo-operator:v0.2.0", "/quay.io/example/foo-sidecar:v0.2.0"}},
		// opm does not count the bundle image as seen, so an operator
		// image equal to it is listed twice.
		{"bundle image equal to a container image", "quay.io/example/foo-sidecar:v0.2.0", []string{
			"/quay.io/example/foo-init:v0.2.0", "operand/quay.io/example/foo-operand:v0.2.0",
			"operator/quay.io/example/foo-operator:v0.2.0", "/quay.io/example/foo-sidecar:v0.2.0",
			"/quay.io/example/foo-sidecar:v0.2.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := renderBundle(t, Options{ImageRefTemplate: tt.template}, nil)
			var got []string
			for _, ri := range b.RelatedImages {
				got = append(got, ri.Name+"/"+ri.Image)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("relatedImages = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDecodeFirst(t *testing.T) {
	tests := []struct {
		name, in string
		want     annotations
		wantErr  bool
	}{
		{"yaml", "annotations:\n  operators.operatorframework.io.bundle.package.v1: foo\n", annotations{PackageName: "foo"}, false},
		{"json", `{"annotations": {"operators.operatorframework.io.bundle.package.v1": "foo"}}`, annotations{PackageName: "foo"}, false},
		// JSON fails on the number, YAML converts it to the string field.
		{"json with a number falls back to yaml", `{"annotations": {"operators.operatorframework.io.bundle.package.v1": 12}}`, annotations{PackageName: "12"}, false},
		{"leading separator", "---\nannotations:\n  operators.operatorframework.io.bundle.channels.v1: a,b\n---\nannotations: {}\n", annotations{Channels: "a,b"}, false},
		{"bad separator", "--- nope\nannotations: {}\n", annotations{}, true},
		{"empty", "", annotations{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got annotationsFile
			err := decodeFirst([]byte(tt.in), &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("decodeFirst() error = %v, wantErr %v", err, tt.wantErr)
			}
			if got.Annotations != tt.want {
				t.Errorf("decodeFirst() = %+v, want %+v", got.Annotations, tt.want)
			}
		})
	}
}

func TestManifestNumbers(t *testing.T) {
	o, err := decodeManifest([]byte("kind: X\na: 1.0\nb: 2\nc: 1.5\nd: 1e3\ne: 99999999999999999999\nf: '<'\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":1,"b":2,"c":1.5,"d":1000,"e":100000000000000000000,"f":"\u003c","kind":"X"}`
	if string(data) != want {
		t.Errorf("manifest JSON = %s, want %s", data, want)
	}
}

// opm's migration decodes the whole CSV into the upstream type first, which
// rejects versions and releases that rendering accepted.
func TestMigrationErrors(t *testing.T) {
	csv := fixture(t, csvFile)
	tests := []struct {
		name, old, new, want string
	}{
		{"numeric release", "  version: 0.2.0\n", "  version: 0.2.0\n  release: 2\n",
			"migrate: json: cannot unmarshal number into Go struct field ClusterServiceVersionSpec.spec.release of type string"},
		{"release with a leading zero", "  version: 0.2.0\n", "  version: 0.2.0\n  release: \"1.02\"\n",
			`migrate: Numeric PreRelease version must not contain leading zeroes "02"`},
		{"version that is not semver", "  version: 0.2.0\n", "  version: banana\n",
			`migrate: Invalid character(s) found in major number "0banana"`},
	}
	opts := Options{MigrateLevel: MigrateBundleObjectToMeta, ImageRefTemplate: "quay.io/example/foo-bundle:v1"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := bundleVariant(t, map[string]string{csvFile: strings.Replace(csv, tt.old, tt.new, 1)})
			// Rendering alone succeeds.
			if _, err := render(t, Options{ImageRefTemplate: opts.ImageRefTemplate}, dir); err != nil {
				t.Fatalf("Render() without migration: %v", err)
			}
			_, err := render(t, opts, dir)
			var re *RefError
			if !errors.As(err, &re) || !re.Migrate || re.Kind != KindBundleDir || err.Error() != tt.want {
				t.Errorf("Render() error = %v, want %q from a migration", err, tt.want)
			}
		})
	}
}
