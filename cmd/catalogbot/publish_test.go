package main

// These tests publish the fixture catalogs to an in-process registry on
// 127.0.0.1 (checks/registry/registrytest) and to OCI layouts.

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
)

var publishLine = regexp.MustCompile(`^(sha256:[0-9a-f]{64}) (published|unchanged)\n$`)

// publishOutput checks the one line publish prints and returns its digest.
func publishOutput(t *testing.T, r result, status string) string {
	t.Helper()
	m := publishLine.FindStringSubmatch(r.stdout)
	if r.code != exitOK || m == nil || m[2] != status {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and %q", r.code, r.stdout, r.stderr, status)
	}
	return m[1]
}

func TestPublishRegistry(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	opm := reg.PushIndex(t, reg.Ref("operator-framework/opm:v1"), registrytest.Index(t, func(p string) v1.Image {
		return registrytest.CatalogImage(t, p, nil)
	}, "linux/amd64", "linux/arm64"))
	target := reg.Ref("team/catalog:latest")
	args := []string{"publish", "--catalog", validDir, "--image", target, "--opm-image", reg.Ref("operator-framework/opm:v1"), "--insecure-registry", reg.Host}

	r := cli(t, nil, args...)
	first := publishOutput(t, r, "published")
	// The base is named with the digest it resolved to, on every run.
	if want := "base=" + reg.Ref("operator-framework/opm:v1") + "@" + opm.String(); !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not name the base as %q", r.stderr, want)
	}
	// This opm base has no opm to build the serve cache with: the build
	// says so for each platform, and how the image will start instead.
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		if want := p + ": no opm serve cache"; !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "--cache-enforce-integrity=false") {
			t.Errorf("stderr %q does not say %q and how the image starts", r.stderr, want)
		}
	}
	ref, err := name.ParseReference(target)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(ref)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest.String() != first || !desc.MediaType.IsIndex() {
		t.Fatalf("registry has %s (%s), want the index %s", desc.Digest, desc.MediaType, first)
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 || m.Annotations[build.AnnBaseDigest] != opm.String() {
		t.Errorf("index of %d manifests annotated %v; want 2 and base digest %s", len(m.Manifests), m.Annotations, opm)
	}

	uploads := reg.Count("POST", "blobs") + reg.Count("PUT", "blobs") + reg.Count("PATCH", "blobs")
	puts := reg.Count("PUT", "manifests")
	if second := publishOutput(t, cli(t, nil, args...), "unchanged"); second != first {
		t.Errorf("second publish digest %s, want %s", second, first)
	}
	if n := reg.Count("POST", "blobs") + reg.Count("PUT", "blobs") + reg.Count("PATCH", "blobs") - uploads; n != 0 {
		t.Errorf("unchanged publish made %d blob uploads", n)
	}
	if n := reg.Count("PUT", "manifests") - puts; n != 0 {
		t.Errorf("unchanged publish put %d manifests", n)
	}

	// One platform of the base gives a single image.
	one := publishOutput(t, cli(t, nil, append(args[:3:3], "--image", reg.Ref("team/catalog:amd64"),
		"--opm-image", reg.Ref("operator-framework/opm:v1"), "--platform", "linux/amd64")...), "published")
	if one == first {
		t.Error("one platform published the index")
	}
}

func TestPublishLayout(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	out := filepath.Join(t.TempDir(), "layout")
	args := []string{"publish", "--catalog", validDir, "--image", "oci:" + out + ":v1", "--base", "scratch"}
	first := publishOutput(t, cli(t, nil, args...), "published")
	if second := publishOutput(t, cli(t, nil, args...), "unchanged"); second != first {
		t.Errorf("second publish digest %s, want %s", second, first)
	}

	// What was published renders as the directory does.
	fromImage, fromDir := cli(t, nil, "render", "oci:"+out+":v1"), cli(t, nil, "render", validDir)
	if fromImage.code != exitOK || fromImage.stdout != fromDir.stdout {
		t.Errorf("render of the published image (exit %d, %s) differs from the directory's", fromImage.code, fromImage.stderr)
	}

	// Reference digests are recorded, and are an input of the digest.
	withRefs := publishOutput(t, cli(t, nil, append(args, "--reference-digest", "quay.io/a/b:v1=sha256:abc")...), "published")
	p, err := layout.FromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	h, err := v1.NewHash(withRefs)
	if err != nil {
		t.Fatal(err)
	}
	img, err := p.Image(h)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Annotations[build.AnnReferences]; got != `{"quay.io/a/b:v1":"sha256:abc"}` {
		t.Errorf("references annotation %q", got)
	}

	t.Setenv("SOURCE_DATE_EPOCH", "")
	if third := publishOutput(t, cli(t, nil, args...), "published"); third == first {
		t.Error("another SOURCE_DATE_EPOCH gave the same digest")
	}
}

func TestPublishInvalidCatalog(t *testing.T) {
	out := filepath.Join(t.TempDir(), "layout")
	r := cli(t, nil, "publish", "--catalog", brokenDir, "--image", "oci:"+out, "--base", "scratch")
	if r.code != exitInvalid || !strings.Contains(r.stdout, "catalog.") || !strings.Contains(r.stderr, "not published") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1, findings and not published", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "sha256:") {
		t.Error("an invalid catalog was published")
	}
	if _, err := filepath.Glob(filepath.Join(out, "*")); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) != 0 {
		t.Errorf("layout written for an invalid catalog: %v", m)
	}
}

func TestPublishUsageErrors(t *testing.T) {
	out := "oci:" + filepath.Join(t.TempDir(), "layout")
	tests := []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"no catalog", "", []string{"publish", "--image", out}, "needs --image and one of --catalog and --config"},
		{"no image", "", []string{"publish", "--catalog", validDir}, "needs --image and one of --catalog and --config"},
		{"catalog and config", "", []string{"publish", "--catalog", validDir, "--config", "catalog.yaml", "--image", out}, "one of --catalog and --config"},
		{"reference digests for a catalog.yaml", "", []string{"publish", "--config", "catalog.yaml", "--image", out, "--reference-digest", "a=sha256:1"}, "--reference-digest is for --catalog"},
		{"argument", "", []string{"publish", validDir}, "takes no arguments"},
		{"missing dir", "", []string{"publish", "--catalog", "testdata/nope", "--image", out}, "no such file"},
		{"bad platform", "", []string{"publish", "--catalog", validDir, "--image", out, "--base", "scratch", "--platform", "linux"}, "invalid --platform: platform \"linux\""},
		{"bad epoch", "yesterday", []string{"publish", "--catalog", validDir, "--image", out}, "SOURCE_DATE_EPOCH"},
		{"bad image", "", []string{"publish", "--catalog", validDir, "--image", "Bad Ref", "--base", "scratch"}, "Bad Ref"},
		{"repo and config", "", []string{"publish", "--repo", ".", "--config", "catalog.yaml"}, "one of --catalog, --config and --repo"},
		{"rev without a repo", "", []string{"publish", "--catalog", validDir, "--image", "oci:x", "--rev", "main"}, "--rev is for --repo"},
		{"reference digests for a repo", "", []string{"publish", "--repo", ".", "--reference-digest", "a=sha256:1"}, "--reference-digest is for --catalog"},
		{"repo without an image", "", []string{"publish", "--repo", validDir}, "names no publish.image; give --image"},
		{"missing repo", "", []string{"publish", "--repo", "testdata/nope"}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SOURCE_DATE_EPOCH", tt.env)
			r := cli(t, nil, tt.args...)
			if r.code != exitError || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}
