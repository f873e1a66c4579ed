package publishing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/sign"
	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
)

func TestPublishInputs(t *testing.T) {
	roots := fstest.MapFS{"catalog/foo/index.yaml": &fstest.MapFile{}}
	withList := fstest.MapFS{"catalog.yaml": &fstest.MapFile{}, "catalog/foo/index.yaml": &fstest.MapFile{}}
	ready := func() *policy.Policy {
		p := policy.Default()
		p.Publish.Image = "quay.io/example/catalog:latest"
		return p
	}
	type want struct {
		list, image string
		roots       []string
		build       build.Options
	}
	base := want{image: "quay.io/example/catalog:latest", roots: []string{"catalog"}, build: build.Options{Base: policy.BaseOPM}}
	for _, tc := range []struct {
		name   string
		tree   fstest.MapFS
		change func(*policy.Policy)
		want   func(*want)
	}{
		{"the catalog roots", roots, func(*policy.Policy) {}, func(*want) {}},
		{"catalog.yaml at the root", withList, func(*policy.Policy) {}, func(w *want) { w.list, w.roots = "catalog.yaml", nil }},
		{"the policy's reference list", roots, func(p *policy.Policy) { p.Catalog.ReferenceList = "lists/catalog.yaml" },
			func(w *want) { w.list, w.roots = "lists/catalog.yaml", nil }},
		{"other roots", roots, func(p *policy.Policy) { p.Catalog.Roots = []string{"v4.16", "v4.17"} },
			func(w *want) { w.roots = []string{"v4.16", "v4.17"} }},
		{"no image", roots, func(p *policy.Policy) { p.Publish.Image = "" }, func(w *want) { w.image = "" }},
		{"scratch", roots, func(p *policy.Policy) { p.Publish.Base = policy.BaseScratch }, func(w *want) { w.build.Base = policy.BaseScratch }},
		{"a pinned opm image", roots, func(p *policy.Policy) { p.Publish.OPMImage = "quay.io/operator-framework/opm@sha256:0" },
			func(w *want) { w.build.OPMImage = "quay.io/operator-framework/opm@sha256:0" }},
		{"platforms", roots, func(p *policy.Policy) { p.Publish.Platforms = []string{"linux/amd64", "linux/arm64"} },
			func(w *want) { w.build.Platforms = []string{"linux/amd64", "linux/arm64"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ready()
			tc.change(p)
			w := base
			w.roots = append([]string(nil), base.roots...)
			// A reference list is the catalog; the roots play no part.
			tc.want(&w)
			inputs, err := Inputs(p, tc.tree)
			if err != nil || len(inputs) != 1 {
				t.Fatalf("PublishInputs: %+v, %v; want one catalog", inputs, err)
			}
			src, opts := inputs[0].Source, inputs[0].Options
			if !reflect.DeepEqual(src.Tree, tc.tree) || src.Dir != "" || src.List != nil {
				t.Errorf("the source is not the tree alone: %+v", src)
			}
			if src.ReferenceList != w.list || !reflect.DeepEqual(src.Roots, w.roots) {
				t.Errorf("source: list %q, roots %q; want %q, %q", src.ReferenceList, src.Roots, w.list, w.roots)
			}
			if opts.Image != w.image || !reflect.DeepEqual(opts.Build, w.build) {
				t.Errorf("options: image %q, build %+v; want %q, %+v", opts.Image, opts.Build, w.image, w.build)
			}
		})
	}
}

// TestPublishInputsCatalogs: each catalog of a catalogs list is published
// from its own roots to its own target.
func TestPublishInputsCatalogs(t *testing.T) {
	tree := fstest.MapFS{
		"catalogs/v4.17/foo/index.yaml": &fstest.MapFile{},
		"catalogs/v4.18/foo/index.yaml": &fstest.MapFile{},
		"incubator/bar/index.yaml":      &fstest.MapFile{},
	}
	p, findings := policy.Parse(policy.FileName, []byte(`catalogs:
  - each: catalogs/v4.*
  - name: incubator
    roots: [incubator]
    image: quay.io/acme/incubator:latest
publish:
  image: "quay.io/acme/index:{catalog}"
  base: scratch
`))
	if len(findings) > 0 {
		t.Fatal(findings)
	}
	inputs, err := Inputs(p, tree)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range inputs {
		// The attestations record the catalog's name: Options.Catalog.
		got = append(got, fmt.Sprintf("%s %v %s %s %s", in.Catalog, in.Source.Roots, in.Options.Image, in.Options.Build.Base, in.Options.Catalog))
	}
	want := []string{
		"v4.17 [catalogs/v4.17] quay.io/acme/index:v4.17 scratch v4.17",
		"v4.18 [catalogs/v4.18] quay.io/acme/index:v4.18 scratch v4.18",
		"incubator [incubator] quay.io/acme/incubator:latest scratch incubator",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PublishInputs:\n got %q\nwant %q", got, want)
	}
}

func TestNewSigner(t *testing.T) {
	dir := t.TempDir()
	priv, _, err := sign.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "cosign.key")
	if err := os.WriteFile(keyFile, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	noActions := sign.KeylessOptions{Getenv: func(string) string { return "" }}
	signtest.NewVault(t).NewKey(t, "catalog")
	log := &sign.Rekor{URL: "https://rekor.example"}
	for _, tc := range []struct {
		name, mode, password string
		with                 SignWith
		signer               bool
		want                 string
	}{
		{"key with a log", policy.SignKey, "pw", SignWith{Key: keyFile, Log: log}, true, ""},
		{"a KMS key with a log", policy.SignKey, "", SignWith{Key: "hashivault://catalog", Log: log}, true, ""},
		{"none", policy.SignNone, "", SignWith{Key: keyFile}, false, ""},
		{"unset", "", "", SignWith{Key: keyFile}, false, ""},
		{"key", policy.SignKey, "pw", SignWith{Key: keyFile}, true, ""},
		{"key without one", policy.SignKey, "pw", SignWith{}, false, "publish.sign is key, and the publisher has no signing key"},
		{"key with the wrong password", policy.SignKey, "nope", SignWith{Key: keyFile}, false, "cannot decrypt the key (is COSIGN_PASSWORD its password?)"},
		{"a KMS key", policy.SignKey, "", SignWith{Key: "hashivault://catalog"}, true, ""},
		{"a KMS key that is not there", policy.SignKey, "", SignWith{Key: "hashivault://gone"}, false, "signing key hashivault://gone: reading its public key"},
		{"a KMS scheme no provider serves", policy.SignKey, "", SignWith{Key: "nosuchkms://k"}, false, "an executable named sigstore-kms-nosuchkms on $PATH"},
		{"keyless outside Actions", policy.SignKeyless, "", SignWith{Keyless: noActions}, false, "permissions: id-token: write"},
		{"unknown", "cosign", "", SignWith{}, false, `publish.sign "cosign": want none, key or keyless`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("COSIGN_PASSWORD", tc.password)
			s, err := NewSigner(context.Background(), tc.mode, tc.with)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if (s != nil) != tc.signer {
				t.Fatalf("signer = %v, want one: %v", s, tc.signer)
			}
			// The log goes with every kind of signer: one code path.
			if s != nil && s.Log() != tc.with.Log {
				t.Fatalf("signer log = %v, want %v", s.Log(), tc.with.Log)
			}
		})
	}
}

func TestProvenance(t *testing.T) {
	policyFile := []byte("publish:\n  sign: key\n")
	tree := fstest.MapFS{policy.FileName: &fstest.MapFile{Data: policyFile}}
	src, appr := Provenance(policy.Default(), tree, "example/catalog", "abc")
	if src != (sign.Source{Repository: "example/catalog", Commit: "abc", Path: "."}) {
		t.Errorf("source = %+v", src)
	}
	// What git hash-object says of the same bytes.
	const blob = "9bbc1487ca98d57d2fee5ffce7bf0283368274ee"
	if appr.Policy != (sign.Revision{Path: policy.FileName, Blob: blob, Commit: "abc"}) || appr.ApprovalsRecorded || appr.Note == "" {
		t.Errorf("approval = %+v", appr)
	}
}

// TestRebuildInput: a publication rebuilds from the catalog it records,
// whatever target it was pushed to; one that records no catalog (an older
// record) is found by the target the policy gave it.
func TestRebuildInput(t *testing.T) {
	several := fstest.MapFS{
		policy.FileName:                 &fstest.MapFile{Data: []byte("catalogs:\n  - each: catalogs/v4.*\n  - name: incubator\n    roots: [incubator]\n    image: quay.io/acme/incubator\npublish:\n  image: \"quay.io/acme/index:{catalog}\"\n  base: scratch\n")},
		"catalogs/v4.17/foo/index.yaml": &fstest.MapFile{},
		"catalogs/v4.18/foo/index.yaml": &fstest.MapFile{},
		"incubator/bar/index.yaml":      &fstest.MapFile{},
	}
	one := fstest.MapFS{
		policy.FileName:          &fstest.MapFile{Data: []byte("publish:\n  image: quay.io/acme/catalog:latest\n  base: scratch\n")},
		"catalog/foo/index.yaml": &fstest.MapFile{},
	}
	tests := []struct {
		name    string
		tree    fstest.MapFS
		catalog string
		image   string
		roots   []string
		wantErr string
	}{
		{name: "the recorded catalog, pushed to its own target", tree: several, catalog: "v4.18", image: "quay.io/acme/index:v4.18", roots: []string{"catalogs/v4.18"}},
		{name: "the recorded catalog, pushed elsewhere", tree: several, catalog: "v4.18", image: "registry.example/mirror/other:x", roots: []string{"catalogs/v4.18"}},
		{name: "no catalog recorded, the policy's target spelled otherwise", tree: several, image: "quay.io/acme/incubator:latest", roots: []string{"incubator"}},
		{name: "the one catalog, pushed elsewhere", tree: one, image: "registry.example/mirror/catalog:x", roots: []string{"catalog"}},
		{name: "no catalog recorded and no target matches", tree: several, image: "registry.example/mirror/other:x",
			wantErr: "the publication records no catalog, and no catalog of the policy at the recorded commit (v4.17, v4.18, incubator) publishes registry.example/mirror/other:x"},
		{name: "a catalog the policy no longer has", tree: several, catalog: "v4.16", image: "quay.io/acme/index:v4.16", wantErr: `the policy at the recorded commit has no catalog "v4.16"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := sign.ProvenanceParameters{Source: sign.Source{Commit: "c0ffee", Path: "."}, Catalog: tt.catalog, Image: tt.image, Base: "scratch"}
			src, opts, err := RebuildInput(tt.tree, p)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(src.Roots, tt.roots) || opts.Image != tt.image || !opts.BuildOnly {
				t.Errorf("roots %q, image %s, build only %v; want %q, %s, true", src.Roots, opts.Image, opts.BuildOnly, tt.roots, tt.image)
			}
			// A record without catalogd's view is an image built
			// without its annotations, and rebuilt so.
			if !opts.OmitCatalogdAnnotations {
				t.Error("a publication that records no catalogd view is rebuilt with its annotations")
			}
			p.Catalogd = &fbc.ServedView{Size: 1, Digest: "sha256:00", Objects: 1}
			if _, opts, _ := RebuildInput(tt.tree, p); opts.OmitCatalogdAnnotations {
				t.Error("a publication that records catalogd's view is rebuilt without its annotations")
			}
		})
	}
}
