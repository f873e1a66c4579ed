package pipeline

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
)

// withBundle adds bundle foo.v1.0.1 with image to fooCatalog, replacing
// foo.v1.0.0 in the channel.
func withBundle(image string) string {
	c := strings.Replace(fooCatalog, "  - name: foo.v1.0.0\n", "  - name: foo.v1.0.0\n  - name: foo.v1.0.1\n    replaces: foo.v1.0.0\n", 1)
	return c + `---
schema: olm.bundle
package: foo
name: foo.v1.0.1
image: ` + image + `
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 1.0.1
`
}

func TestImages(t *testing.T) {
	reg := registrytest.New(t)
	registrytest.Push(t, reg.Ref("foo-bundle:v1.0.1"), registrytest.RandomImage(t))
	// The base's image, quay.io/example/foo-bundle:v1.0.0, is not in any
	// reachable registry: only what the change adds may be asked for.
	base := map[string]string{
		"catalog/foo/catalog.yaml": fooCatalog,
		"catalog/bar/catalog.yaml": strings.ReplaceAll(fooCatalog, "foo", "bar"),
	}
	pinned := policy.Default()
	pinned.Images.Pin = map[images.Kind]bool{images.KindBundle: true}

	tests := []struct {
		name   string
		head   string // catalog/foo/catalog.yaml
		policy *policy.Policy
		all    bool
		want   checks.Conclusion
		// rules of the findings, each on catalog/foo/catalog.yaml
		wantRules []string
		wantAsked []string // repositories the registry was asked about
	}{
		{name: "an added image that exists", head: withBundle(reg.Ref("foo-bundle:v1.0.1")),
			want: checks.Success, wantAsked: []string{"foo-bundle"}},
		{name: "an added image that does not", head: withBundle(reg.Ref("foo-bundle:v9")),
			want: checks.Failure, wantRules: []string{"IM1"}, wantAsked: []string{"foo-bundle"}},
		{name: "an unpinned image under a digest policy", head: withBundle(reg.Ref("foo-bundle:v1.0.1")), policy: pinned,
			// The registry is still asked, for the digest to pin to.
			want: checks.Failure, wantRules: []string{"IM5"}, wantAsked: []string{"foo-bundle"}},
		{name: "no image changed", head: strings.Replace(fooCatalog, "defaultChannel: stable", "defaultChannel: \"stable\"", 1),
			want: checks.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(reg.Requests())
			head := map[string]string{"catalog/foo/catalog.yaml": tt.head, "catalog/bar/catalog.yaml": base["catalog/bar/catalog.yaml"]}
			pol := tt.policy
			if pol == nil {
				pol = policy.Default()
			}
			in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: pol,
				ImageOptions: &images.Options{Keychain: authn.NewMultiKeychain(), Attempts: 1}, AllImages: tt.all}
			res := Images{}.Run(context.Background(), in)
			if res.Conclusion != tt.want {
				t.Errorf("conclusion = %s, want %s (%s)", res.Conclusion, tt.want, res.Summary)
			}
			var rules []string
			for _, f := range res.Findings {
				rules = append(rules, f.Rule)
				if f.File != "catalog/foo/catalog.yaml" || f.Line == 0 {
					t.Errorf("finding %+v, want it on a line of catalog/foo/catalog.yaml", f)
				}
			}
			if strings.Join(rules, ",") != strings.Join(tt.wantRules, ",") {
				t.Errorf("rules = %v, want %v", rules, tt.wantRules)
			}
			asked := map[string]bool{}
			for _, r := range reg.Requests()[before:] {
				if r.Repo != "" {
					asked[r.Repo] = true
				}
			}
			if len(asked) != len(tt.wantAsked) {
				t.Errorf("registry asked about %v, want %v", asked, tt.wantAsked)
			}
			for _, r := range tt.wantAsked {
				if !asked[r] {
					t.Errorf("registry not asked about %s", r)
				}
			}
		})
	}
}

func TestImagesAll(t *testing.T) {
	reg := registrytest.New(t)
	registrytest.Push(t, reg.Ref("foo-bundle:v1.0.1"), registrytest.RandomImage(t))
	cat := map[string]string{"catalog/foo/catalog.yaml": strings.ReplaceAll(withBundle(reg.Ref("foo-bundle:v1.0.1")),
		"quay.io/example/foo-bundle:v1.0.0", reg.Ref("foo-bundle:v1.0.0"))}
	// Nothing changed, yet every image is checked, and the one that was
	// never pushed is found missing.
	in := &Input{Change: diff(cat, cat, nil), Base: tree(cat), Head: tree(cat), Policy: policy.Default(),
		ImageOptions: &images.Options{Keychain: authn.NewMultiKeychain(), Attempts: 1}, AllImages: true}
	res := Images{}.Run(context.Background(), in)
	if res.Conclusion != checks.Failure || len(res.Findings) != 1 || !strings.Contains(res.Findings[0].Message, "foo-bundle:v1.0.0") {
		t.Errorf("result = %+v, want one not-found finding for foo-bundle:v1.0.0", res)
	}
}

func TestImagesOffIsLeftOut(t *testing.T) {
	in := &Input{Policy: policy.Default()}
	for _, c := range Checks(in) {
		if c.Name() == ImagesName {
			t.Errorf("the images check runs without ImageOptions")
		}
	}
	in.ImageOptions = &images.Options{}
	found := false
	for _, c := range Checks(in) {
		found = found || c.Name() == ImagesName
	}
	if !found {
		t.Errorf("the images check is left out with ImageOptions set")
	}
}

// TestImagesPending: a registry that rate limits, or that cannot be
// reached, leaves the images check pending with what it waits for, never
// passing; a failure found meanwhile stands.
func TestImagesPending(t *testing.T) {
	reg := registrytest.New(t)
	registrytest.Push(t, reg.Ref("foo-bundle:v1.0.1"), registrytest.RandomImage(t))
	limited := registrytest.New(t)
	limited.Fail(registrytest.Fault{Status: 429, Body: `{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}`})
	down := registrytest.NewHangup(t)

	base := map[string]string{"catalog/foo/catalog.yaml": fooCatalog}
	tests := []struct {
		name      string
		images    []string // bundle image, then related images
		want      checks.Conclusion
		wantWaits []checks.Wait
	}{
		{name: "rate limited", images: []string{limited.Ref("foo-bundle:v1.0.1")}, want: checks.Pending,
			wantWaits: []checks.Wait{{Registry: limited.Host, Class: checks.WaitRateLimited, Count: 1}}},
		{name: "unreachable", images: []string{down.Ref("foo-bundle:v1.0.1")}, want: checks.Pending,
			wantWaits: []checks.Wait{{Registry: down.Host, Class: checks.WaitTransport, Count: 1}}},
		{name: "both, and one that answers", images: []string{reg.Ref("foo-bundle:v1.0.1"), limited.Ref("a:1"), down.Ref("b:1"), down.Ref("c:1")},
			want: checks.Pending, wantWaits: checks.AddWait([]checks.Wait{{Registry: limited.Host, Class: checks.WaitRateLimited, Count: 1}},
				checks.Wait{Registry: down.Host, Class: checks.WaitTransport, Count: 2})},
		{name: "a missing image fails whatever else waits", images: []string{reg.Ref("foo-bundle:v9"), limited.Ref("a:1")},
			want: checks.Failure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			catalog := withBundle(tt.images[0])
			if len(tt.images) > 1 {
				catalog += "relatedImages:\n"
				for i, img := range tt.images[1:] {
					catalog += "  - name: rel" + string(rune('a'+i)) + "\n    image: " + img + "\n"
				}
			}
			head := map[string]string{"catalog/foo/catalog.yaml": catalog}
			in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: policy.Default(),
				ImageOptions: &images.Options{Keychain: authn.NewMultiKeychain(), Attempts: 1}}
			res := checks.Run(context.Background(), in, checks.Check[*Input](Images{})).Results[0]
			if res.Conclusion != tt.want {
				t.Fatalf("conclusion = %s, want %s (%s)", res.Conclusion, tt.want, res.Summary)
			}
			if !reflect.DeepEqual(res.Waits, tt.wantWaits) {
				t.Errorf("waits = %+v, want %+v", res.Waits, tt.wantWaits)
			}
			if tt.want == checks.Pending && !strings.Contains(res.Summary, "Could not judge every image: registry ") {
				t.Errorf("the summary does not say what the check waits for: %s", res.Summary)
			}
		})
	}
}
