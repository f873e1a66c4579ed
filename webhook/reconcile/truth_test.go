package reconcile

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/bundletest"
)

// TestTruthfulnessThroughTheApp: the App, built as catalogbot serve builds
// it (anonymous registry access under an egress rule that allows only the
// test registry's loopback address), pulls the image of each bundle a pull
// request adds. A blob that lies about its image (each kind of lie) fails
// the check run with the BT finding annotated on the blob's line and is
// not merged; the faithful blob merges.
func TestTruthfulnessThroughTheApp(t *testing.T) {
	reg := registrytest.New(t)
	im := bundletest.Push(t, reg.Host)
	rule, err := egress.New([]string{"127.0.0.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	anonymous := authn.NewMultiKeychain()
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: anonymous, Egress: rule, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// The base holds the package's owners and no catalog yet: each pull
	// request adds package foo with one bundle.
	files := catalogRepo(mergePolicy)
	delete(files, "catalog/foo/catalog.yaml")
	e := newEnvWith(t, files, func(o *AppOptions) {
		o.Images = &images.Options{Keychain: anonymous, Egress: rule, Attempts: 1}
		o.Renderer = renderer
	})

	lies := []struct{ variant, rule string }{
		{"other-package", "BT2"},
		{"other-version", "BT3"},
		{"missing-api", "BT4"},
		{"extra-required", "BT5"},
		{"other-related", "BT8"},
	}
	for _, l := range lies {
		t.Run(l.variant, func(t *testing.T) {
			pr := e.openPR("alice", "lie-"+l.variant, map[string]string{"catalog/foo/catalog.yaml": im.Catalog(t, l.variant, "")})
			e.process(pr, "pull_request")
			run := e.run(pr.HeadSHA(), CheckRunName)
			if run.Conclusion != "failure" || !strings.Contains(run.Title, "truthfulness") {
				t.Fatalf("check run %s/%s %q, want a failure naming truthfulness\n%s", run.Status, run.Conclusion, run.Title, run.Summary)
			}
			found := false
			for _, a := range run.Annotations {
				if (strings.Contains(a.Message, l.rule) || strings.Contains(a.Title, l.rule)) && a.Path == "catalog/foo/catalog.yaml" && a.StartLine == 12 {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s annotation on catalog/foo/catalog.yaml:12: %+v", l.rule, run.Annotations)
			}
			if pr.Merged() {
				t.Error("a lying blob was merged")
			}
		})
	}

	pr := e.openPR("alice", "faithful", map[string]string{"catalog/foo/catalog.yaml": im.Catalog(t, bundletest.Faithful, "")})
	e.process(pr, "pull_request")
	if run := e.run(pr.HeadSHA(), CheckRunName); run.Conclusion != "success" {
		t.Fatalf("check run %s/%s %q, want success\n%s", run.Status, run.Conclusion, run.Title, run.Summary)
	}
	if !pr.Merged() {
		t.Error("the faithful blob was not merged")
	}
}
