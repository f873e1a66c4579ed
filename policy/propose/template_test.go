package propose_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/policy/propose/proposetest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/template"
)

// TestRunTemplates: a package rendered from a template, basic or semver,
// mapped to two catalogs as fbc.catalog_mapping maps one template to
// several OpenShift versions, gets its release in the template once, and
// both outputs regenerated: the commit passes every check, the templates
// check included, and the outputs hold the new bundle by digest.
func TestRunTemplates(t *testing.T) {
	reg := registrytest.New(t)
	d100 := proposetest.PushBundle(t, reg, "acme/foo-bundle", "v1.0.0", "foo", "foo.v1.0.0", "1.0.0")
	proposetest.PushBundle(t, reg, "acme/foo-bundle", "v1.1.0", "foo", "foo.v1.1.0", "1.1.0")
	old := reg.Host + "/acme/foo-bundle@" + d100
	opts := testOptions(t, reg, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	r := opts.Renderer
	basic := fmt.Sprintf(`schema: olm.template.basic
entries:
  - schema: olm.package
    name: foo
    defaultChannel: stable
  # releases join stable
  - schema: olm.channel
    package: foo
    name: stable
    entries:
      - name: foo.v1.0.0
  - schema: olm.bundle
    image: %s
`, old)
	semver := fmt.Sprintf("schema: olm.semver\nGenerateMajorChannels: true\nGenerateMinorChannels: false\nstable:\n  bundles:\n    - image: %s\n", old)
	for _, tc := range []struct {
		name, tpl, channel string
		has                []string // in the template afterwards
	}{
		{"basic", basic, "stable", []string{"# releases join stable", "- name: foo.v1.1.0\n        replaces: foo.v1.0.0", "- schema: olm.bundle\n    image: " + reg.Host + "/acme/foo-bundle@sha256:"}},
		{"semver", semver, "stable-v1", []string{"    - image: " + old + "\n    - image: " + reg.Host + "/acme/foo-bundle@sha256:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := template.Render(context.Background(), "templates/foo.yaml", []byte(tc.tpl), template.Options{Renderer: r})
			if err != nil || res.Config == nil {
				t.Fatalf("render the base: %v %v", err, res.Findings)
			}
			var out bytes.Buffer
			if err := render.WriteYAML(&out, res.Config); err != nil {
				t.Fatal(err)
			}
			policyFile := fmt.Sprintf(`catalogs:
  - name: v4.17
    roots: [catalogs/v4.17]
  - name: v4.18
    roots: [catalogs/v4.18]
catalog:
  templates:
    - template: templates/foo.yaml
      output: catalogs/v4.17/foo
    - template: templates/foo.yaml
      output: catalogs/v4.18/foo
propose:
  - package: foo
    repository: %s/acme/foo-bundle
    channels: [%s]
    graph: replaces
`, reg.Host, tc.channel)
			repo := changetest.NewRepo(t)
			base := repo.Commit("catalog", map[string]string{
				".catalogbot.yaml":                policyFile,
				"OWNERS":                          "approvers: [maintainer]\n",
				"templates/foo.yaml":              tc.tpl,
				"catalogs/v4.17/foo/catalog.yaml": out.String(),
				"catalogs/v4.18/foo/catalog.yaml": out.String(),
			})
			o := opts
			o.Repo, o.Branch = repo.Dir, "releases"
			got, err := propose.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Problems) > 0 || len(got.Added) != 1 {
				t.Fatalf("problems %q, added %+v; want 1.1.0 added", got.Problems, got.Added)
			}
			a := got.Added[0]
			if a.Refused != "" || a.Commit == "" || a.Version != "1.1.0" || strings.Join(a.Catalogs, ",") != "v4.17,v4.18" {
				t.Fatalf("added %+v; want 1.1.0 committed in v4.17 and v4.18", a)
			}
			tip, err := change.TreeFS(repo.Git, "releases")
			if err != nil {
				t.Fatal(err)
			}
			tpl, err := fs.ReadFile(tip, "templates/foo.yaml")
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tc.has {
				if !strings.Contains(string(tpl), h) {
					t.Errorf("the template does not hold %q:\n%s", h, tpl)
				}
			}
			c, _, _, err := change.FromGit(repo.Dir, base, a.Commit)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Files) != 3 {
				t.Errorf("changed %+v; want the template and the two outputs", c.Files)
			}
			for _, v := range []string{"v4.17", "v4.18"} {
				data, err := fs.ReadFile(tip, "catalogs/"+v+"/foo/catalog.yaml")
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(data), "name: foo.v1.1.0") || !strings.Contains(string(data), a.Image) {
					t.Errorf("%s's output does not hold foo.v1.1.0 at %s:\n%s", v, a.Image, data)
				}
			}
		})
	}
}
