package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
	"github.com/catalogbot/catalogbot/webhook/reconcile"
)

// TestFrontEndsAgreeOnTemplates runs template pull requests (the demo's
// fixture: a semver template and its output, every bundle pinned by digest
// and in the base's output) through the App and the Action, both rendering
// as they do in production, from registries only. No registry is reached:
// the bundles come from the base.
func TestFrontEndsAgreeOnTemplates(t *testing.T) {
	read := func(side, name string) string {
		data, err := os.ReadFile(filepath.Join(repoRoot, "testdata/demo/template", side, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	const tpl, out = "templates/widget.yaml", "catalog/widget/catalog.yaml"
	policy := agreePolicy + "catalog:\n  templates:\n    - {template: templates/widget.yaml, output: catalog/widget}\n"
	for _, tc := range []struct {
		name    string
		head    map[string]string
		want    checks.Conclusion
		finding string
	}{
		{"template and output together", map[string]string{tpl: read("head", tpl), out: read("head", out)}, checks.Success, ""},
		{"template without its output", map[string]string{tpl: read("head", tpl)}, checks.Failure, "templates/widget.yaml:1 error TP5"},
		{"output without its template", map[string]string{out: read("head", out)}, checks.Failure, "catalog/widget/catalog.yaml:1 error TP6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gh := githubtest.New(t)
			repo := gh.AddRepo("acme", "catalog", map[string]string{
				".catalogbot.yaml":     policy,
				"OWNERS":               "approvers:\n  - root-admin\n",
				"catalog/.indexignore": "OWNERS\n*.md\n",
				tpl:                    read("base", tpl),
				out:                    read("base", out),
			})
			repo.Commit("change", tc.head, "change by root-admin")
			pr := repo.OpenPR("root-admin", "change", "main")

			action := actionVerdict(t, gh, repo, pr, false, "--images=false")
			app := appVerdict(t, gh, repo, pr, 0, func(o *reconcile.AppOptions) {
				rule, err := egress.New(nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				r, err := render.New(render.Options{RegistryOnly: true, TempDir: t.TempDir(), Egress: rule})
				if err != nil {
					t.Fatal(err)
				}
				o.Renderer = r
			})
			if action.Conclusion != tc.want || app.Conclusion != tc.want {
				t.Errorf("Action %s (%s), App %s (%s); want %s", action.Conclusion, action.Title, app.Conclusion, app.Title, tc.want)
			}
			if tc.finding != "" && !slices.ContainsFunc(action.Findings, func(f string) bool { return strings.HasPrefix(f, tc.finding) }) {
				t.Errorf("the Action's findings %q lack %q", action.Findings, tc.finding)
			}
			if !slices.Equal(app.Findings, action.Findings) {
				t.Errorf("findings differ:\n  App:    %q\n  Action: %q", app.Findings, action.Findings)
			}
		})
	}
}
