package propose_test

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/policy/propose/proposetest"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// TestRunCases: one package foo whose repository has releases 1.1.0 and
// 1.2.0, in catalogs that differ one thing per case.
func TestRunCases(t *testing.T) {
	reg := registrytest.New(t)
	proposetest.PushBundle(t, reg, "acme/foo-bundle", "v1.1.0", "foo", "foo.v1.1.0", "1.1.0")
	proposetest.PushBundle(t, reg, "acme/foo-bundle", "v1.2.0", "foo", "foo.v1.2.0", "1.2.0")
	proposetest.PushBundle(t, reg, "acme/bar-bundle", "v2.0.0", "bar", "bar.v2.0.0", "2.0.0")
	// fresh-bundle's release was made an hour before the run.
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fresh, err := mutate.CreatedAt(proposetest.Bundle(t, "foo", "foo.v1.1.0", "1.1.0"), v1.Time{Time: now.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	reg.Push(t, reg.Ref("acme/fresh-bundle:v1.1.0"), fresh)
	watchRepo := func(repo, extra, channels string) string {
		return fmt.Sprintf("propose:\n  - package: foo\n    repository: %s/acme/%s\n    channels: %s\n%s", reg.Host, repo, channels, extra)
	}
	watch := func(extra, channels string) string {
		if extra == "" {
			return watchRepo("foo-bundle", "", channels)
		}
		return extra + watchRepo("foo-bundle", "", channels)
	}
	at := func(version string) string {
		return proposetest.Package("foo", "stable", "foo.v"+version, version)
	}
	jsonChannel := `{"schema": "olm.package", "name": "foo", "defaultChannel": "stable"}
{"schema": "olm.channel", "package": "foo", "name": "stable", "entries": [{"name": "foo.v1.0.0"}]}
{"schema": "olm.bundle", "name": "foo.v1.0.0", "package": "foo", "image": "quay.io/acme/foo-bundle@sha256:` + strings.Repeat("0", 64) + `",
 "properties": [{"type": "olm.package", "value": {"packageName": "foo", "version": "1.0.0"}}]}
`
	tests := []struct {
		name  string
		files map[string]string
		// versions are the rows written, "version catalogs" each.
		versions []string
		problem  string
		skipped  string
		// file, at the branch's tip, holds each of has.
		file string
		has  []string
	}{
		{
			name:     "up to date",
			files:    map[string]string{".catalogbot.yaml": watch("", "[stable]"), "catalog/foo/catalog.yaml": at("1.2.0")},
			versions: nil,
		},
		{
			name: "two catalogs, each given what it lacks",
			files: map[string]string{
				".catalogbot.yaml":                watch("catalogs:\n  - each: catalogs/v4.*\n", "[stable]"),
				"catalogs/v4.17/foo/catalog.yaml": at("1.0.0"),
				"catalogs/v4.18/foo/catalog.yaml": at("1.1.0"),
			},
			versions: []string{"1.1.0 v4.17", "1.2.0 v4.17,v4.18"},
		},
		{
			name: "a release the package has in another channel",
			files: map[string]string{".catalogbot.yaml": watch("", "[stable]"), "catalog/foo/catalog.yaml": at("1.0.0") + `---
schema: olm.channel
package: foo
name: fast
entries:
  - name: foo.v1.1.0
---
schema: olm.bundle
name: foo.v1.1.0
package: foo
image: quay.io/acme/foo-bundle@sha256:` + strings.Repeat("1", 64) + `
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 1.1.0
`},
			versions: []string{"1.2.0 catalog"},
			skipped:  "has version 1.1.0 already as foo.v1.1.0",
		},
		{
			name: "two packages in one file",
			files: map[string]string{
				".catalogbot.yaml": "catalog:\n  layout: free\n" + watch("", "[stable]") +
					fmt.Sprintf("  - package: bar\n    repository: %s/acme/bar-bundle\n    channels: [stable]\n", reg.Host),
				"catalog/all.yaml": at("1.0.0") + proposetest.Package("bar", "stable", "bar.v1.0.0", "1.0.0"),
			},
			versions: []string{"1.1.0 catalog", "1.2.0 catalog", "2.0.0 catalog"},
			file:     "catalog/all.yaml",
			has:      []string{"replaces: foo.v1.1.0", "replaces: bar.v1.0.0"},
		},
		{
			name:     "soaked long enough",
			files:    map[string]string{".catalogbot.yaml": watchRepo("fresh-bundle", "    soak: 30m\n", "[stable]"), "catalog/foo/catalog.yaml": at("1.0.0")},
			versions: []string{"1.1.0 catalog"},
		},
		{
			name:    "not soaked yet",
			files:   map[string]string{".catalogbot.yaml": watchRepo("fresh-bundle", "    soak: 24h\n", "[stable]"), "catalog/foo/catalog.yaml": at("1.0.0")},
			skipped: "released less than 24h0m0s ago",
		},
		{
			name:    "a channel that is not there",
			files:   map[string]string{".catalogbot.yaml": watch("", "[stable, fast]"), "catalog/foo/catalog.yaml": at("1.0.0")},
			problem: "package foo has no channel fast",
		},
		{
			name: "a template renders a directory above the package's",
			files: map[string]string{
				".catalogbot.yaml":         watch("catalog:\n  templates:\n    - template: templates/all.yaml\n      output: catalog\n", "[stable]"),
				"catalog/foo/catalog.yaml": at("1.0.0"),
			},
			problem: "catalog/foo overlaps the output catalog of the template templates/all.yaml",
		},
		{
			name:    "a channel in a JSON file",
			files:   map[string]string{".catalogbot.yaml": watch("", "[stable]"), "catalog/foo/catalog.json": jsonChannel},
			problem: "catalog/foo/catalog.json: channel stable of package foo is in a JSON file",
		},
		{
			name:    "a package not in the catalog",
			files:   map[string]string{".catalogbot.yaml": watch("", "[stable]"), "catalog/bar/catalog.yaml": proposetest.Package("bar", "stable", "bar.v1.0.0", "1.0.0")},
			problem: "no catalog holds package foo",
		},
	}
	rule, err := egress.New([]string{reg.Host}, nil)
	if err != nil {
		t.Fatal(err)
	}
	anonymous := authn.NewMultiKeychain()
	r, err := render.New(render.Options{RegistryOnly: true, Keychain: anonymous, Egress: rule})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := changetest.NewRepo(t)
			tt.files["OWNERS"] = "approvers: [maintainer]\n"
			repo.Commit("catalog", tt.files)
			res, err := propose.Run(context.Background(), propose.Options{
				Repo: repo.Dir, Branch: "releases",
				Registry: propose.Registry{Keychain: anonymous, Egress: rule},
				Images:   &images.Options{Keychain: anonymous, Egress: rule},
				Renderer: r,
				Now:      func() time.Time { return now },
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range res.Added {
				if a.Refused != "" {
					t.Errorf("%s refused: %s %v", a.Version, a.Refused, a.Findings)
				}
				got = append(got, a.Version+" "+strings.Join(a.Catalogs, ","))
			}
			if !slices.Equal(got, tt.versions) {
				t.Errorf("added %q, want %q", got, tt.versions)
			}
			switch {
			case tt.problem == "" && len(res.Problems) > 0:
				t.Errorf("problems %q", res.Problems)
			case tt.problem != "" && (len(res.Problems) != 1 || !strings.Contains(res.Problems[0], tt.problem)):
				t.Errorf("problems %q, want one saying %q", res.Problems, tt.problem)
			}
			if tt.skipped != "" && !slices.ContainsFunc(res.Skipped, func(s string) bool { return strings.Contains(s, tt.skipped) }) {
				t.Errorf("skipped %q, want one saying %q", res.Skipped, tt.skipped)
			}
			if tt.file != "" {
				tip, err := change.TreeFS(repo.Git, "releases")
				if err != nil {
					t.Fatal(err)
				}
				data, err := fs.ReadFile(tip, tt.file)
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range tt.has {
					if !strings.Contains(string(data), h) {
						t.Errorf("%s at the tip does not hold %q:\n%s", tt.file, h, data)
					}
				}
			}
			_, err = repo.Git.Reference("refs/heads/releases", false)
			if wrote := err == nil; wrote != (len(tt.versions) > 0) {
				t.Errorf("branch written: %v, want %v", wrote, len(tt.versions) > 0)
			}
		})
	}
}
