package propose_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// TestRunCommunityOperatorsSlice proposes a release of
// libredb-studio-operator in community-operators-prod's layout: its real
// ci.yaml maps its real basic template to the catalogs v4.15 to v4.22
// (operator-pipelines conventions). The bundle images are built here and
// served from a registry on loopback under the pipeline's repository name,
// so the catalogs are what the template renders from them. The release
// goes into the template once and every catalog is regenerated; the
// commit passes every check.
func TestRunCommunityOperatorsSlice(t *testing.T) {
	const pkg = "libredb-studio-operator"
	reg := registrytest.New(t)
	repository := reg.Host + "/community-operator-pipeline-prod/" + pkg
	proposetest.PushBundle(t, reg, "community-operator-pipeline-prod/"+pkg, "0.9.59", pkg, pkg+".v0.9.59", "0.9.59")
	proposetest.PushBundle(t, reg, "community-operator-pipeline-prod/"+pkg, "0.9.60", pkg, pkg+".v0.9.60", "0.9.60")
	opts := testOptions(t, reg, time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC))
	r := opts.Renderer

	read := func(p string) string {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	tpl := strings.ReplaceAll(read("testdata/community-operators-prod/"+pkg+"-basic.yaml"), "quay.io/community-operator-pipeline-prod", reg.Host+"/community-operator-pipeline-prod")
	res, err := template.Render(context.Background(), "basic.yaml", []byte(tpl), template.Options{Renderer: r})
	if err != nil || res.Config == nil {
		t.Fatalf("render the template: %v %v", err, res.Findings)
	}
	var out bytes.Buffer
	if err := render.WriteYAML(&out, res.Config); err != nil {
		t.Fatal(err)
	}
	slice := filepath.Join("..", "..", "testdata", "community-operators-prod")
	files := map[string]string{
		".catalogbot.yaml": read(filepath.Join("..", "..", "cmd", "catalogbot", "testdata", "community-operators-prod.catalogbot.yaml")) +
			fmt.Sprintf("propose:\n  - package: %s\n    repository: %s\n    channels: [alpha]\n    graph: replaces\n", pkg, repository),
		// The pipeline's root config.yaml: its maintainers, and the
		// registries bundles may come from, the test's in place of quay.io.
		"config.yaml": strings.ReplaceAll(read(filepath.Join("..", "testdata", "conventions", "community-operators-prod", "config.yaml")),
			"quay.io/community-operator-pipeline-prod/", reg.Host+"/community-operator-pipeline-prod/"),
		"operators/" + pkg + "/ci.yaml":                      read(filepath.Join(slice, "operators", pkg, "ci.yaml")),
		"operators/" + pkg + "/catalog-templates/basic.yaml": tpl,
	}
	dirs, err := filepath.Glob(filepath.Join(slice, "catalogs", "v4.*", pkg))
	if err != nil || len(dirs) != 8 {
		t.Fatalf("the slice holds %s in %d catalogs (%v), want 8", pkg, len(dirs), err)
	}
	var catalogs []string
	for _, d := range dirs {
		v := filepath.Base(filepath.Dir(d))
		catalogs = append(catalogs, v)
		files["catalogs/"+v+"/"+pkg+"/catalog.yaml"] = out.String()
	}
	slices.Sort(catalogs)
	repo := changetest.NewRepo(t)
	base := repo.Commit("catalogs", files)

	opts.Repo, opts.Branch, opts.Author = repo.Dir, "propose/"+pkg, "community-operators-bot"
	got, err := propose.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Problems) > 0 || len(got.Added) != 1 {
		t.Fatalf("problems %q, added %+v; want 0.9.60 added", got.Problems, got.Added)
	}
	a := got.Added[0]
	if a.Refused != "" || a.Commit == "" || a.Version != "0.9.60" || !slices.Equal(a.Catalogs, catalogs) {
		t.Fatalf("added %+v\nwant 0.9.60 committed in %v", a, catalogs)
	}
	c, _, _, err := change.FromGit(repo.Dir, base, a.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 1+len(catalogs) {
		t.Errorf("changed %d files, want the template and %d catalogs: %+v", len(c.Files), len(catalogs), c.Files)
	}
	tip, err := change.TreeFS(repo.Git, "propose/"+pkg)
	if err != nil {
		t.Fatal(err)
	}
	after, err := fs.ReadFile(tip, "operators/"+pkg+"/catalog-templates/basic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\n\n%s\n%s", a.Message, a.Body, after)
}
