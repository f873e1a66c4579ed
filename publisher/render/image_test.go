package render

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// An image in an OCI layout renders like the same image in a registry; its
// image field is the oci: reference as given.
func TestOCILayout(t *testing.T) {
	img := rendertest.Image(t, rendertest.BundleLabels("foo", "stable,fast"),
		rendertest.Layer(t, rendertest.DirEntries(t, bundleFixture, "")...))
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": "v0.2.0",
	})); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"oci:" + dir + ":v0.2.0", "oci:" + dir} {
		t.Run(ref, func(t *testing.T) {
			cfg, err := render(t, Options{}, ref)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(readGolden(t, "bundle-image.yaml", ""), "/example/foo-bundle:v0.2.0", ref)
			if got := write(t, "yaml", cfg); got != want {
				t.Errorf("output differs\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
	_, err = render(t, Options{}, "oci:"+dir+":nope")
	if want := `render reference "oci:` + dir + `:nope": failed to pull image "oci:` + dir + `:nope": no image tagged "nope" in OCI layout ` + dir; err == nil || err.Error() != want {
		t.Errorf("Render(missing tag) error = %v, want %q", err, want)
	}
}

// A registry named in InsecureRegistries is reached over plain HTTP even
// when its name is not a loopback address; without it, the same name is
// tried over HTTPS and fails.
func TestInsecureRegistry(t *testing.T) {
	host := pushImages(t)
	// Every connection goes to the loopback test registry, whatever name
	// was asked for.
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, host)
		},
	}
	const name = "registry.test:5000"
	ref := name + "/example/foo-bundle:v0.2.0"
	opts := Options{InsecureRegistries: []string{name}, Transport: transport, Keychain: authn.NewMultiKeychain()}
	cfg, err := render(t, opts, ref)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Bundles[0].Image; got != ref {
		t.Errorf("image = %q, want %q", got, ref)
	}

	opts.InsecureRegistries = nil
	if _, err := render(t, opts, ref); err == nil || !strings.Contains(err.Error(), `failed to pull image "`+ref+`"`) {
		t.Errorf("Render() over HTTPS error = %v, want a pull failure", err)
	}
}

// An image labelled as a bundle without the bundle layout fails as opm's
// bundle parser does, naming the bundle's directory, not a temporary one.
func TestBundleImageWithoutManifests(t *testing.T) {
	host := registrytest.New(t).Host
	ref := host + "/example/empty-bundle:v1"
	registrytest.Push(t, ref, rendertest.Image(t, rendertest.BundleLabels("foo", "stable"),
		rendertest.Layer(t, rendertest.Entry{Name: "metadata/annotations.yaml", Body: "annotations: {}\n"})))
	_, err := render(t, Options{}, ref)
	want := `render reference "` + ref + `": open manifests: no such file or directory`
	if err == nil || err.Error() != want {
		t.Errorf("Render() error = %v, want %q", err, want)
	}
}

// LayoutDigest names what a tag in a layout points at, as a HEAD request
// does for a registry, and fails as rendering would.
func TestLayoutDigest(t *testing.T) {
	img := rendertest.Image(t, map[string]string{"a": "b"})
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": "v1",
	})); err != nil {
		t.Fatal(err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec    string
		wantErr bool
	}{
		{dir + ":v1", false},
		{dir, false},
		{dir + ":v2", true},
		{dir + "/absent", true},
	}
	for _, tt := range tests {
		got, err := LayoutDigest(tt.spec)
		if (err != nil) != tt.wantErr || (err == nil && got != want) {
			t.Errorf("LayoutDigest(%s) = %v, %v; want %v, error %v", tt.spec, got, err, want, tt.wantErr)
		}
	}
}
