package images_test

import (
	"fmt"
	"github.com/catalogbot/catalogbot/checks/registry"
	"net/http"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

// TestPolicy checks each rule on its own, switched on and off, and what each
// costs in requests.
func TestPolicy(t *testing.T) {
	reg := registrytest.New(t)
	labelled := map[string]string{images.CatalogLabel: "/configs"}
	bundle := reg.PushRandom(t, reg.Ref("team/bundle:v1"))
	index := reg.PushIndex(t, reg.Ref("team/multi:v1"), registrytest.Index(t, func(string) v1.Image { return registrytest.RandomImage(t) }, "linux/amd64", "linux/arm64"))
	catalog := reg.Push(t, reg.Ref("team/catalog:v1"), registrytest.CatalogImage(t, "linux/amd64", labelled))
	reg.Push(t, reg.Ref("team/unlabelled:v1"), registrytest.CatalogImage(t, "linux/amd64", map[string]string{"vendor": "x"}))
	catalogIndex := reg.PushIndex(t, reg.Ref("team/catalog-multi:v1"), registrytest.Index(t, func(p string) v1.Image {
		return registrytest.CatalogImage(t, p, labelled)
	}, "linux/amd64", "linux/arm64/v8", "linux/ppc64le"))
	reg.PushIndex(t, reg.Ref("team/catalog-unlabelled-multi:v1"), registrytest.Index(t, func(p string) v1.Image {
		return registrytest.CatalogImage(t, p, nil)
	}, "linux/amd64"))

	tests := []struct {
		name   string
		policy func(*images.Policy)
		image  string
		kind   images.Kind
		class  registry.Class
		msg    string
		gets   int // manifest and blob GETs
		heads  int // HEADs of manifests
	}{
		{name: "bundle single manifest", image: "team/bundle:v1", kind: images.KindBundle, class: registry.ClassOK, heads: 1},
		{name: "bundle index", image: "team/multi:v1", kind: images.KindBundle, class: registry.ClassPolicy,
			msg: "it is an image index (a multi-platform list); a bundle image must be a single image manifest", heads: 1},
		{name: "bundle index, rule off", policy: func(p *images.Policy) { p.SingleManifestBundles = false },
			image: "team/multi:v1", kind: images.KindBundle, class: registry.ClassOK, heads: 1},
		{name: "related index is fine", image: "team/multi@" + index.String(), kind: images.KindRelated, class: registry.ClassOK, heads: 1},

		{name: "pin bundles: tag", policy: func(p *images.Policy) { p.Pin = map[images.Kind]bool{images.KindBundle: true} },
			image: "team/bundle:v1", kind: images.KindBundle, class: registry.ClassPolicy,
			msg: "it is not pinned by digest; pin it as " + reg.Ref("team/bundle@"+bundle.String()), heads: 1},
		{name: "pin bundles: digest", policy: func(p *images.Policy) { p.Pin = map[images.Kind]bool{images.KindBundle: true} },
			image: "team/bundle@" + bundle.String(), kind: images.KindBundle, class: registry.ClassOK, heads: 1},
		{name: "pin bundles: related tag is fine", policy: func(p *images.Policy) { p.Pin = map[images.Kind]bool{images.KindBundle: true} },
			image: "team/bundle:v1", kind: images.KindRelated, class: registry.ClassOK, heads: 1},
		{name: "pin related", policy: func(p *images.Policy) { p.Pin = map[images.Kind]bool{images.KindRelated: true} },
			image: "team/bundle:v1", kind: images.KindRelated, class: registry.ClassPolicy, msg: "not pinned by digest", heads: 1},
		{name: "pin references", policy: func(p *images.Policy) { p.Pin = map[images.Kind]bool{images.KindReference: true} },
			image: "team/catalog:v1", kind: images.KindReference, class: registry.ClassPolicy,
			msg: "pin it as " + reg.Ref("team/catalog@"+catalog.String()), heads: 1, gets: 2},
		// The pin rule is decided without the registry: a missing tag
		// fails it too, and the registry's answer is the detail.
		{name: "pin all, missing tag is still unpinned", policy: func(p *images.Policy) { p.Pin = images.PinAll() },
			image: "team/bundle:v9", kind: images.KindBundle, class: registry.ClassPolicy,
			msg: "it is not pinned by digest; pin it as " + reg.Ref("team/bundle") + "@sha256:... (the tag could not be resolved to suggest the digest: not_found", heads: 1},
		{name: "pin all, missing digest is not_found", policy: func(p *images.Policy) { p.Pin = images.PinAll() },
			image: "team/bundle@sha256:" + strings.Repeat("0", 64), kind: images.KindBundle, class: registry.ClassNotFound, heads: 1},

		{name: "allowlist: registry", policy: func(p *images.Policy) { p.AllowRegistries = []string{reg.Host} },
			image: "team/bundle:v1", kind: images.KindBundle, class: registry.ClassOK, heads: 1},
		{name: "allowlist: prefix", policy: func(p *images.Policy) { p.AllowRegistries = []string{"quay.io/example", reg.Host + "/team"} },
			image: "team/bundle:v1", kind: images.KindBundle, class: registry.ClassOK, heads: 1},
		{name: "allowlist: prefix is whole segments", policy: func(p *images.Policy) { p.AllowRegistries = []string{reg.Host + "/tea"} },
			image: "team/bundle:v1", kind: images.KindBundle, class: registry.ClassPolicy, msg: "is outside the allowed registries"},
		{name: "allowlist: other registry", policy: func(p *images.Policy) { p.AllowRegistries = []string{"quay.io"} },
			image: "team/bundle:v9", kind: images.KindBundle, class: registry.ClassPolicy,
			msg: "repository " + reg.Ref("team/bundle") + " is outside the allowed registries (quay.io); it was not contacted"},
		{name: "bundle registries: a bundle inside", policy: func(p *images.Policy) { p.BundleRegistries = []string{reg.Host + "/team/"} },
			image: "team/bundle:v1", kind: images.KindBundle, class: registry.ClassOK, heads: 1},
		{name: "bundle registries: a bundle outside is refused uncontacted", policy: func(p *images.Policy) { p.BundleRegistries = []string{"quay.io/community-operator-pipeline-prod/"} },
			image: "team/bundle:v1", kind: images.KindBundle, class: registry.ClassPolicy,
			msg: "bundle image repository " + reg.Ref("team/bundle") + " is outside the allowed bundle registries (quay.io/community-operator-pipeline-prod/)"},
		{name: "bundle registries: a related image may come from anywhere", policy: func(p *images.Policy) { p.BundleRegistries = []string{"quay.io"} },
			image: "team/bundle:v1", kind: images.KindRelated, class: registry.ClassOK, heads: 1},

		{name: "catalog label", image: "team/catalog:v1", kind: images.KindReference, class: registry.ClassOK, heads: 1, gets: 2},
		{name: "catalog label missing", image: "team/unlabelled:v1", kind: images.KindReference, class: registry.ClassPolicy,
			msg: "it has no label operators.operatorframework.io.index.configs.v1", heads: 1, gets: 2},
		{name: "catalog label, rule off", policy: func(p *images.Policy) { p.CatalogLabel = false },
			image: "team/unlabelled:v1", kind: images.KindReference, class: registry.ClassOK, heads: 1},
		{name: "catalog index label", image: "team/catalog-multi:v1", kind: images.KindReference, class: registry.ClassOK, heads: 1, gets: 3},
		{name: "catalog index label missing", image: "team/catalog-unlabelled-multi:v1", kind: images.KindReference, class: registry.ClassPolicy,
			msg: "has no label", heads: 1, gets: 3},

		{name: "platforms provided", policy: func(p *images.Policy) { p.Platforms = []string{"linux/amd64", "linux/arm64"} },
			image: "team/catalog-multi@" + catalogIndex.String(), kind: images.KindReference, class: registry.ClassOK, heads: 1, gets: 3},
		{name: "platform missing", policy: func(p *images.Policy) { p.Platforms = []string{"linux/arm64", "linux/s390x"} },
			image: "team/catalog-multi:v1", kind: images.KindReference, class: registry.ClassPolicy,
			msg: "it does not provide linux/s390x (it provides linux/amd64, linux/arm64/v8, linux/ppc64le)", heads: 1, gets: 3},
		{name: "platform of a single image", policy: func(p *images.Policy) { p.Platforms = []string{"linux/arm64"}; p.CatalogLabel = false },
			image: "team/catalog:v1", kind: images.KindBase, class: registry.ClassPolicy,
			msg: "it does not provide linux/arm64 (it provides linux/amd64)", heads: 1, gets: 2},
		{name: "platforms do not apply to bundles", policy: func(p *images.Policy) { p.Platforms = []string{"linux/s390x"} },
			image: "team/bundle:v1", kind: images.KindBundle, class: registry.ClassOK, heads: 1},

		{name: "several rules broken", policy: func(p *images.Policy) { p.Pin = images.PinAll(); p.Platforms = []string{"linux/arm64"} },
			image: "team/unlabelled:v1", kind: images.KindReference, class: registry.ClassPolicy,
			msg: "it has no label " + images.CatalogLabel + ", so opm cannot render it as a catalog; it does not provide linux/arm64", heads: 1, gets: 2},
		{name: "invalid reference", image: "Team/Bundle:v1", kind: images.KindBundle, class: registry.ClassPolicy, msg: "not a valid image reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg.Reset()
			o := options(newFakeClock(), nil)
			if tt.policy != nil {
				tt.policy(&o.Policy)
			}
			res := verifyOne(t, newVerifier(t, o), reg.Ref(tt.image), tt.kind)
			if res.Class != tt.class || !strings.Contains(res.Message, tt.msg) {
				t.Errorf("got %s: %q\nwant %s: %q", res.Class, res.Message, tt.class, tt.msg)
			}
			gets := reg.Count(http.MethodGet, "manifests") + reg.Count(http.MethodGet, "blobs")
			heads := reg.Count(http.MethodHead, "manifests")
			if gets != tt.gets || heads != tt.heads {
				t.Errorf("%d GETs and %d HEADs, want %d and %d: %v", gets, heads, tt.gets, tt.heads, reg.Requests())
			}
			if heads == 0 && len(reg.Requests()) != 0 {
				t.Errorf("requests %v for a reference settled without the registry", reg.Requests())
			}
		})
	}
}

func TestPolicyErrors(t *testing.T) {
	for _, p := range []images.Policy{
		{AllowRegistries: []string{""}},
		{AllowRegistries: []string{"quay.io/Upper"}},
		{Platforms: []string{"linux"}},
	} {
		if _, err := images.New(images.Options{Policy: p}); err == nil {
			t.Errorf("policy %+v accepted", p)
		}
	}
	if _, err := images.New(images.Options{Insecure: []string{"host/path"}}); err == nil {
		t.Error("insecure registry with a path accepted")
	}
}

// TestDedupe: one check per image, however it is spelt; every location kept.
func TestDedupe(t *testing.T) {
	loc := func(line int) images.Location {
		return images.Location{Kind: images.KindRelated, File: "c.yaml", Line: line}
	}
	refs := images.Dedupe([]images.Use{
		{Image: "quay.io/b/x:v1", Location: loc(1)},
		{Image: "busybox", Location: loc(2)},
		{Image: "docker.io/library/busybox:latest", Location: loc(3)},
		{Image: "quay.io/b/x:v1", Location: loc(4)},
		{Image: "quay.io/a/x", Location: loc(5)},
		{Image: "not a reference", Location: loc(6)},
		{Image: "not a reference", Location: loc(7)},
	})
	var got []string
	for _, r := range refs {
		var lines []string
		for _, l := range r.Locations {
			lines = append(lines, fmt.Sprint(l.Line))
		}
		got = append(got, r.Image+"@"+strings.Join(lines, ","))
	}
	want := "busybox@2,3 not a reference@6,7 quay.io/a/x@5 quay.io/b/x:v1@1,4"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestInsecureRegistry: a registry with a certificate nobody signed is
// reached only when it is listed as insecure; otherwise the TLS failure is
// a transport failure, not retried.
func TestInsecureRegistry(t *testing.T) {
	reg := registrytest.NewTLS(t)
	reg.PushRandom(t, reg.Ref("a/b:v1"))
	for _, insecure := range []bool{false, true} {
		reg.Reset()
		o := options(newFakeClock(), nil)
		if insecure {
			o.Insecure = []string{reg.Host}
		}
		res := verifyOne(t, newVerifier(t, o), reg.Ref("a/b:v1"), images.KindBundle)
		want := registry.ClassTransport
		if insecure {
			want = registry.ClassOK
		}
		if res.Class != want {
			t.Errorf("insecure=%v: %s %s, want %s", insecure, res.Class, res.Message, want)
		}
	}
}

// TestAdmits: the allowlist as anything but the verifier asks it, matched
// on whole path segments, failing closed on what it cannot read.
func TestAdmits(t *testing.T) {
	tests := []struct {
		allow []string
		image string
		ok    bool
		why   string
	}{
		{nil, "127.0.0.1:5000/x/y:v1", true, ""},
		{[]string{"quay.io/example"}, "quay.io/example/foo:v1", true, ""},
		{[]string{"quay.io/example"}, "quay.io/examples/foo:v1", false, "repository quay.io/examples/foo is outside the allowed registries (quay.io/example); it was not contacted"},
		{[]string{"quay.io/example"}, "127.0.0.1:5000/example/foo:v1", false, "outside the allowed registries"},
		{[]string{"docker.io"}, "busybox:latest", true, ""},
		{[]string{"quay.io"}, "Not A Reference", false, "not a valid image reference"},
		{[]string{""}, "quay.io/example/foo:v1", false, "want a registry host"},
	}
	for _, tt := range tests {
		ok, why := images.Policy{AllowRegistries: tt.allow}.Admits(tt.image)
		if ok != tt.ok || !strings.Contains(why, tt.why) || (tt.ok && why != "") {
			t.Errorf("allow %q, image %q: Admits = %v, %q; want %v, %q", tt.allow, tt.image, ok, why, tt.ok, tt.why)
		}
	}
}
