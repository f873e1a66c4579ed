package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// Render fixtures and opm's recorded outputs, relative to the repository
// root; see publisher/render/testdata/README.md.
const (
	renderData = "publisher/render/testdata"
	bundleDir  = renderData + "/foo-bundle"
	catalogDir = renderData + "/fbcdir"
	// A CSV version with build metadata and olm.substitutesFor.
	substitutesDir = renderData + "/substitutes/build-metadata"
	renderGolden   = renderData + "/golden"
)

func renderGoldenFile(t *testing.T, name, host string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, renderGolden, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(data), "REGISTRY", host)
}

// pushRenderImages serves the fixture bundle as an image, and an image
// whose only label says nothing about its type.
func pushRenderImages(t *testing.T) string {
	t.Helper()
	// An empty docker config: the CLI's default keychain then reads no
	// credentials of this machine and runs none of its helpers.
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host := registrytest.New(t).Host
	bundle := rendertest.Image(t, rendertest.BundleLabels("foo", "stable,fast"),
		rendertest.Layer(t, rendertest.DirEntries(t, filepath.Join(repoRoot, bundleDir), "")...))
	registrytest.Push(t, host+"/example/foo-bundle:v0.2.0", bundle)
	registrytest.Push(t, host+"/example/unlabeled:latest", rendertest.Image(t, map[string]string{"foo": "bar"}))
	return host
}

func TestRender(t *testing.T) {
	host := pushRenderImages(t)
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"bundle directory, default JSON", []string{bundleDir}, "bundle-dir.json"},
		{"bundle directory as YAML", []string{bundleDir, "-o", "yaml"}, "bundle-dir.yaml"},
		{"migrated with an image template", []string{bundleDir, "-o", "json",
			"--migrate-level", "bundle-object-to-csv-metadata",
			"--alpha-image-ref-template", "quay.io/example/{{.Package}}-bundle:v{{.Version}}"}, "bundle-dir-migrated.json"},
		{"--migrate", []string{bundleDir, "--migrate",
			"--alpha-image-ref-template", "quay.io/example/{{.Package}}-bundle:v{{.Version}}"}, "bundle-dir-migrated.json"},
		{"bundle image", []string{host + "/example/foo-bundle:v0.2.0", "-o", "yaml"}, "bundle-image.yaml"},
		{"catalog directory as JSON", []string{catalogDir, "-o", "json"}, "fbc-dir.json"},
		{"catalog directory as YAML", []string{catalogDir, "-o", "yaml"}, "fbc-dir.yaml"},
		// Release from the version's build metadata, as opm derives it.
		{"substituting bundle as YAML", []string{substitutesDir, "-o", "yaml"}, "substitutes-build-metadata.yaml"},
		{"substituting bundle migrated with an image template", []string{substitutesDir, "-o", "json",
			"--migrate-level", "bundle-object-to-csv-metadata",
			"--alpha-image-ref-template", "quay.io/example/{{.Package}}-bundle:v{{.Version}}"}, "substitutes-build-metadata-migrated.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, nil, append([]string{"render"}, tt.args...)...)
			if r.code != exitOK || r.stderr != "" {
				t.Fatalf("exit status %d, stderr:\n%s", r.code, r.stderr)
			}
			if want := renderGoldenFile(t, tt.golden, host); r.stdout != want {
				t.Errorf("stdout differs from %s\n--- got\n%s\n--- want\n%s", tt.golden, r.stdout, want)
			}
		})
	}
}

func TestRenderMerges(t *testing.T) {
	r := cli(t, nil, "render", catalogDir, bundleDir, "-o", "yaml")
	if r.code != exitOK {
		t.Fatalf("got %+v", r)
	}
	// The bundle directory's foo.v0.2.0 joins the catalog's package foo,
	// after the catalog's own foo.v0.2.0: render does not validate.
	if n := strings.Count(r.stdout, "\nname: foo.v0.2.0\n"); n != 2 {
		t.Errorf("foo.v0.2.0 rendered %d times, want 2:\n%s", n, r.stdout)
	}
}

func TestRenderFailures(t *testing.T) {
	host := pushRenderImages(t)
	noCSV := filepath.Join(t.TempDir(), "bundle")
	for _, d := range []string{"manifests", "metadata"} {
		if err := os.MkdirAll(filepath.Join(noCSV, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	crd, _ := os.ReadFile(filepath.Join(repoRoot, bundleDir, "manifests/foo.crd.yaml"))
	if err := os.WriteFile(filepath.Join(noCSV, "manifests/foo.crd.yaml"), crd, 0o644); err != nil {
		t.Fatal(err)
	}
	unlabeled := host + "/example/unlabeled:latest"
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"non-canonical reference", []string{"render", "foo-bundle:v0.2.0"},
			`catalogbot: render reference "foo-bundle:v0.2.0" (image): failed to pull image "foo-bundle:v0.2.0": repository name must be canonical` + "\n"},
		{"image of unknown type", []string{"render", unlabeled},
			`catalogbot: render reference "` + unlabeled + `" (image): render "` + unlabeled + `": image type could not be determined, found labels` + "\n  foo=bar\n"},
		{"bundle directory without a CSV", []string{"render", noCSV},
			`catalogbot: render reference "` + noCSV + `" (bundle directory): no csv in bundle` + "\n"},
		{"missing directory", []string{"render", "./no-such-bundle"},
			`catalogbot: render reference "./no-such-bundle" (no such file or directory, so read as an image): failed to pull image "./no-such-bundle": invalid reference format` + "\n"},
		// Nothing is printed when a later reference fails.
		{"second reference fails", []string{"render", catalogDir, "foo-bundle:v0.2.0"},
			`catalogbot: render reference "foo-bundle:v0.2.0" (image): failed to pull image "foo-bundle:v0.2.0": repository name must be canonical` + "\n"},
		{"a file", []string{"render", bundleDir + "/metadata/annotations.yaml"},
			`catalogbot: render reference "` + bundleDir + `/metadata/annotations.yaml" (file): ref "` + bundleDir + `/metadata/annotations.yaml" is not a directory: not allowed` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, nil, tt.args...)
			if r.code != exitInvalid {
				t.Errorf("exit status %d, want %d", r.code, exitInvalid)
			}
			if r.stderr != tt.stderr {
				t.Errorf("stderr =\n%s\nwant\n%s", r.stderr, tt.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
	// opm's message alone is what the golden records; the CLI adds only
	// what the reference was taken for.
	want := strings.TrimSuffix(strings.TrimPrefix(renderGoldenFile(t, "unlabeled-image.stderr", host), "<date> <time> "), "\n")
	if got := strings.Replace(tests[1].stderr, " (image)", "", 1); got != "catalogbot: "+want+"\n" {
		t.Errorf("unlabeled image message %q does not carry opm's %q", got, want)
	}
}

func TestRenderUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // first line of stderr
	}{
		{"no reference", []string{"render"}, "catalogbot: render takes at least one reference"},
		{"unknown output", []string{"render", "-o", "xml", bundleDir}, `catalogbot: invalid --output value "xml", expected (json|yaml)`},
		{"unknown migration level", []string{"render", "--migrate-level", "everything", bundleDir}, `catalogbot: unknown migration level "everything"`},
		{"both migration flags", []string{"render", "--migrate", "--migrate-level", "none", bundleDir},
			"catalogbot: if any flags in the group [migrate migrate-level] are set none of the others can be; [migrate migrate-level] were all set"},
		{"template that does not parse", []string{"render", "--alpha-image-ref-template", "{{.Version", bundleDir},
			"catalogbot: invalid image reference template: template: image-ref-template:1: unclosed action"},
		{"unknown flag", []string{"render", "--use-http", bundleDir}, "catalogbot: unknown flag: --use-http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, nil, tt.args...)
			if r.code != exitError {
				t.Errorf("exit status %d, want %d", r.code, exitError)
			}
			if first, _, _ := strings.Cut(r.stderr, "\n"); first != tt.want {
				t.Errorf("stderr:\n%s\nwant first line:\n%s", r.stderr, tt.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}
