package template_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
	"github.com/catalogbot/catalogbot/publisher/template"
	"github.com/catalogbot/catalogbot/publisher/template/templatetest"
)

// seed pushes bundles of package "widget" at the versions given to a new
// loopback registry, tagged by version, and returns the host.
func seed(t *testing.T, versions ...string) string {
	t.Helper()
	host := registrytest.New(t).Host
	var bundles []templatetest.Bundle
	for _, v := range versions {
		bundles = append(bundles, templatetest.Bundle{Package: "widget", Version: v,
			Description: "Widget " + v, Icon: "PHN2Zy8+"})
	}
	templatetest.Push(t, func(b templatetest.Bundle) string {
		return host + "/widget-bundle:v" + strings.ReplaceAll(b.Version, "+", "-")
	}, false, bundles...)
	return host
}

func renderer(t *testing.T, level string) *render.Renderer {
	t.Helper()
	r, err := render.New(render.Options{MigrateLevel: level, RegistryOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func write(t *testing.T, cfg *declcfg.DeclarativeConfig, host string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := render.WriteYAML(&buf, cfg); err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(buf.Bytes(), []byte(host), []byte("REGISTRY"))
}

const semverTemplate = `schema: olm.semver
generateMajorChannels: true
generateMinorChannels: true
candidate:
  bundles:
  - image: HOST/widget-bundle:v0.1.0
  - image: HOST/widget-bundle:v0.1.1
  - image: HOST/widget-bundle:v1.0.0
  - image: HOST/widget-bundle:v1.1.0
  - image: HOST/widget-bundle:v1.1.1
fast:
  bundles:
  - image: HOST/widget-bundle:v1.0.0
  - image: HOST/widget-bundle:v1.1.0
stable:
  bundles:
  - image: HOST/widget-bundle:v1.0.0
`

const basicTemplate = `schema: olm.template.basic
entries:
- schema: olm.package
  name: widget
  defaultChannel: stable
- schema: olm.channel
  package: widget
  name: stable
  entries:
  - name: widget.v1.0.0
  - name: widget.v1.1.0
    replaces: widget.v1.0.0
- schema: olm.bundle
  image: HOST/widget-bundle:v1.0.0
- schema: olm.bundle
  image: HOST/widget-bundle:v1.1.0
- schema: example.other
  package: widget
  note: kept as written
`

// TestRenderGolden expands a semver and a basic template, with and
// without a migration, detected and given by type.
func TestRenderGolden(t *testing.T) {
	host := seed(t, "0.1.0", "0.1.1", "1.0.0", "1.1.0", "1.1.1")
	for _, tc := range []struct{ name, typ, level, text string }{
		{"semver", "", "", semverTemplate},
		{"semver-migrated", "semver", render.MigrateBundleObjectToMeta, semverTemplate},
		{"basic", "", "", basicTemplate},
		{"basic-migrated", "basic", render.MigrateBundleObjectToMeta, basicTemplate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(strings.ReplaceAll(tc.text, "HOST", host))
			res, err := template.Render(context.Background(), "t.yaml", data,
				template.Options{Type: tc.typ, Renderer: renderer(t, tc.level), Concurrency: 3})
			if err != nil {
				t.Fatal(err)
			}
			if res.Config == nil {
				t.Fatalf("findings: %v", res.Findings)
			}
			checkstest.Golden(t, "testdata/"+tc.name+".yaml", write(t, res.Config, host))
		})
	}
}

// TestFindings: each broken template gets findings with the rule and line
// of what is wrong, and no catalog.
func TestFindings(t *testing.T) {
	host := seed(t, "1.0.0", "1.0.0+build")
	templatetest.Push(t, func(templatetest.Bundle) string { return host + "/other-bundle:v2.0.0" }, false,
		templatetest.Bundle{Package: "other", Version: "2.0.0"})
	templatetest.Push(t, func(templatetest.Bundle) string { return host + "/bad-bundle:v1" }, false,
		templatetest.Bundle{Package: "widget", Version: "not-a-version", Name: "widget.bad"})
	registrytest.Push(t, host+"/catalog:v1", rendertest.Image(t, map[string]string{render.ConfigsLabel: "/configs"},
		rendertest.Layer(t, rendertest.Entry{Name: "configs/"})))
	for _, tc := range []struct {
		name, typ, text string
		want            []string // rule:line
	}{
		{"syntax", "", "schema: olm.semver\ncandidate: [\n", []string{"TP1:2"}},
		{"no schema", "", "candidate: {}\n", []string{"TP2:1"}},
		{"unknown schema", "", "a: 1\nschema: olm.composite\n", []string{"TP2:2"}},
		{"type mismatch", "basic", "schema: olm.semver\n", []string{"TP2:1"}},
		{"unknown field", "", "schema: olm.semver\nstable:\n  bundles: []\n  extra: 1\n", []string{"TP3:4"}},
		{"preference", "", "schema: olm.semver\ndefaultChannelTypePreference: major\n", []string{"TP3:2"}},
		{"bad preference", "", "schema: olm.semver\ndefaultChannelTypePreference: patch\n", []string{"TP3:2"}},
		{"no bundles", "", "schema: olm.semver\n", []string{"TP4:0"}},
		{"missing image", "", "schema: olm.semver\nstable:\n  bundles:\n  - image: HOST/widget-bundle:v9\n", []string{"TP4:4"}},
		{"catalog image", "", "schema: olm.semver\nstable:\n  bundles:\n  - image: HOST/catalog:v1\n", []string{"TP4:4"}},
		{"not a reference", "", "schema: olm.semver\nstable:\n  bundles:\n  - image: ./bundle\n", []string{"TP4:4"}},
		{"other package", "", "schema: olm.semver\nstable:\n  bundles:\n  - image: HOST/widget-bundle:v1.0.0\n  - image: HOST/other-bundle:v2.0.0\n", []string{"TP4:5"}},
		{"bad version", "", "schema: olm.semver\nstable:\n  bundles:\n  - image: HOST/bad-bundle:v1\n", []string{"TP4:4"}},
		{"build metadata", "", "schema: olm.semver\nstable:\n  bundles:\n  - image: HOST/widget-bundle:v1.0.0\n  - image: HOST/widget-bundle:v1.0.0-build\n", []string{"TP4:2"}},
		{"basic bundle with properties", "", "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: HOST/widget-bundle:v1.0.0\n  properties: [{type: olm.package, value: {packageName: widget, version: 1.0.0}}]\n", []string{"TP3:4"}},
		{"basic entry without schema", "", "schema: olm.template.basic\nentries:\n- name: widget\n", []string{"TP3:2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(strings.ReplaceAll(tc.text, "HOST", host))
			res, err := template.Render(context.Background(), "t.yaml", data,
				template.Options{Type: tc.typ, Renderer: renderer(t, "")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Config != nil {
				t.Fatalf("rendered a catalog, want findings %v", tc.want)
			}
			var got []string
			for _, f := range res.Findings {
				got = append(got, fmt.Sprintf("%s:%d", f.Rule, f.Line))
				if f.File != "t.yaml" || f.Severity != checks.SeverityError {
					t.Errorf("finding %+v: want an error in t.yaml", f)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("findings %q, want %q\n%v", got, tc.want, res.Findings)
			}
		})
	}
}
