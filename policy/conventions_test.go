package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/owners"
)

// copFS is the real config.yaml and three real ci.yaml files of
// community-operators-prod with a policy of one line.
func copFS(t *testing.T, policy string) fstest.MapFS {
	t.Helper()
	dir := filepath.Join("testdata", "conventions", "community-operators-prod")
	fsys := fstest.MapFS{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fsys[filepath.ToSlash(rel)] = &fstest.MapFile{Data: data}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if policy != "" {
		fsys[FileName] = &fstest.MapFile{Data: []byte(policy)}
	}
	for _, c := range []string{"v4.12", "v4.17", "v4.22"} {
		fsys["catalogs/"+c+"/sailoperator/catalog.yaml"] = &fstest.MapFile{Data: []byte("x")}
	}
	return fsys
}

// TestOperatorPipelines: one line of policy reads community-operators-prod
// as its own pipeline does.
func TestOperatorPipelines(t *testing.T) {
	fsys := copFS(t, "")
	pol, findings, err := Load(fsys)
	if err != nil || len(findings) > 0 {
		t.Fatalf("Load: %v %v", err, findings)
	}
	if got := pol.Publish.Image; got != "quay.io/redhat/redhat----community-operator-index:{catalog}" {
		t.Errorf("publish image %q", got)
	}
	targets, err := pol.Targets(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range targets {
		names = append(names, tg.Name+"="+tg.Image)
	}
	want := []string{
		"v4.12=quay.io/redhat/redhat----community-operator-index:v4.12",
		"v4.17=quay.io/redhat/redhat----community-operator-index:v4.17",
		"v4.22=quay.io/redhat/redhat----community-operator-index:v4.22",
	}
	if !slices.Equal(names, want) {
		t.Errorf("catalogs %q, want %q", names, want)
	}
	if !slices.Equal(pol.Images.BundleRegistries, []string{"quay.io/community-operator-pipeline-prod/", "quay.io/openshift-community-operators/"}) {
		t.Errorf("bundle registries %q", pol.Images.BundleRegistries)
	}
	if pol.Images.AllowRegistries != nil {
		t.Errorf("the allowlist %q would refuse related images from other registries", pol.Images.AllowRegistries)
	}
	if !slices.Equal(pol.Owners.Sources, []string{owners.SourceCIYAML}) {
		t.Errorf("owners sources %q", pol.Owners.Sources)
	}
	if m := pol.Owners.Maintainers; m == nil || m.File != "config.yaml" || m.Line != 3 || !slices.Equal(m.Logins, []string{"Allda", "ezopezo", "haripate", "mporrato", "tomasbakk"}) {
		t.Errorf("maintainers %+v", m)
	}
	if pol.Catalog.Layout != LayoutDirectories {
		t.Errorf("layout %q", pol.Catalog.Layout)
	}
	var pairs []string
	for _, tp := range pol.Catalog.Templates {
		pairs = append(pairs, tp.Template+" -> "+tp.Output+" ("+tp.Type+")")
	}
	for _, w := range []string{
		"operators/sailoperator/catalog-templates/basic-eol.yaml -> catalogs/v4.14/sailoperator (olm.template.basic)",
		"operators/sailoperator/catalog-templates/basic.yaml -> catalogs/v4.22/sailoperator (olm.template.basic)",
		"operators/konflux/catalog-templates/semver.yaml -> catalogs/v4.20/konflux (olm.semver)",
		"operators/kubevirt-wol/catalog-templates/semver.yaml -> catalogs/v4.17/kubevirt-wol (olm.semver)",
	} {
		if !slices.Contains(pairs, w) {
			t.Errorf("no template pair %q in\n%s", w, strings.Join(pairs, "\n"))
		}
	}
	if n := len(pairs); n != 9+3+4 {
		t.Errorf("%d template pairs, want 16 (sailoperator 9, konflux 3, kubevirt-wol 4)", n)
	}
	for key, want := range map[string]string{
		"conventions":             ".catalogbot.yaml:1",
		"catalogs":                OriginConventions,
		"publish.image":           "config.yaml:31",
		"images.bundleRegistries": "config.yaml:26",
		"owners.maintainers":      "config.yaml:3",
	} {
		if got := pol.Origins[key]; got != want {
			t.Errorf("origin of %s = %q, want %q", key, got, want)
		}
	}
}

func TestOperatorPipelinesProblems(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(fstest.MapFS)
		file   string
		line   int
		substr string
	}{
		{name: "no config.yaml", edit: func(f fstest.MapFS) { delete(f, "config.yaml") },
			file: FileName, line: 1, substr: "reads config.yaml at the repository root, and there is none"},
		{name: "maintainers not a list", edit: func(f fstest.MapFS) {
			f["config.yaml"] = &fstest.MapFile{Data: []byte("organization: x\nmaintainers: someone\n")}
		}, file: "config.yaml", line: 2, substr: "maintainers"},
		{name: "a registry that is none", edit: func(f fstest.MapFS) {
			f["config.yaml"] = &fstest.MapFile{Data: []byte("allowed_bundle_registries:\n  - \"not a host/\"\n")}
		}, file: "config.yaml", line: 2, substr: "allowed_bundle_registries[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := copFS(t, "conventions: operator-pipelines\n")
			tt.edit(fsys)
			_, findings, err := Load(fsys)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				if f.File == tt.file && f.Line == tt.line && strings.Contains(f.Message, tt.substr) {
					return
				}
			}
			t.Errorf("no finding at %s:%d with %q in %+v", tt.file, tt.line, tt.substr, findings)
		})
	}
}

// TestOperatorPipelinesExplicit: what the policy file says wins over the
// conventions, and a broken fbc section in one ci.yaml is a note that
// leaves the policy valid.
func TestOperatorPipelinesExplicit(t *testing.T) {
	fsys := copFS(t, "conventions: operator-pipelines\npublish:\n  image: quay.io/acme/index:{catalog}\ncatalogs:\n  - each: catalogs/v4.2*\n")
	fsys["operators/broken/ci.yaml"] = &fstest.MapFile{Data: []byte("fbc:\n  enabled: true\n  catalog_mapping: nope\n")}
	pol, findings, err := Load(fsys)
	if err != nil || len(findings) > 0 {
		t.Fatalf("Load: %v %v", err, findings)
	}
	if pol.Publish.Image != "quay.io/acme/index:{catalog}" || pol.Origins["publish.image"] != ".catalogbot.yaml:3" {
		t.Errorf("publish image %q from %q", pol.Publish.Image, pol.Origins["publish.image"])
	}
	if len(pol.CatalogSets) != 1 || pol.CatalogSets[0].Each != "catalogs/v4.2*" {
		t.Errorf("catalogs %+v", pol.CatalogSets)
	}
	if len(pol.Notes) != 1 || pol.Notes[0].File != "operators/broken/ci.yaml" || pol.Notes[0].Line != 3 {
		t.Errorf("notes %+v", pol.Notes)
	}
}
