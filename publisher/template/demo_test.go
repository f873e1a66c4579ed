package template_test

import (
	"context"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/template"
	"github.com/catalogbot/catalogbot/publisher/template/templatetest"
)

// demoRepo is the template pull request of `make demo`: a semver template
// whose bundles are pinned by digest under quay.io/example, on the base and
// on a head that adds the released bundles to a fast channel.
const demoRepo = "../../testdata/demo/template"

// TestDemoFixture renders the demo's templates from bundle images pushed
// to a loopback registry and then named as quay.io/example would name them
// (the bundle's image is the reference as given, so only the host moves):
// the outputs the demo commits are what the templates render. Run with
// -update to write them.
func TestDemoFixture(t *testing.T) {
	host := registrytest.New(t).Host
	refs := templatetest.Push(t, func(b templatetest.Bundle) string { return host + "/example/widget-bundle:v" + b.Version }, true,
		templatetest.Bundle{Package: "widget", Version: "1.0.0", Description: "Widgets for everyone."},
		templatetest.Bundle{Package: "widget", Version: "1.0.1", Description: "Widgets for everyone."},
		templatetest.Bundle{Package: "widget", Version: "1.1.0", Description: "Widgets for everyone, faster."})
	public := func(s string) string { return strings.ReplaceAll(s, host+"/", "quay.io/") }
	templates := map[string]string{
		"base": "schema: olm.semver\nstable:\n  bundles:\n  - image: " + refs[0] + "\n  - image: " + refs[1] + "\n  - image: " + refs[2] + "\n",
	}
	// The pull request: the released 1.1.0 goes to the fast channel too.
	templates["head"] = templates["base"] + "fast:\n  bundles:\n  - image: " + refs[2] + "\n"
	for side, text := range templates {
		res, err := template.Render(context.Background(), "widget.yaml", []byte(text), template.Options{Renderer: renderer(t, "")})
		if err != nil || res.Config == nil {
			t.Fatalf("%s: %v %v", side, err, res.Findings)
		}
		checkstest.Golden(t, demoRepo+"/"+side+"/templates/widget.yaml", []byte(public(text)))
		checkstest.Golden(t, demoRepo+"/"+side+"/catalog/widget/catalog.yaml", []byte(public(string(write(t, res.Config, "REGISTRY")))))
	}
}
