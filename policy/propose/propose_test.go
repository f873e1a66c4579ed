package propose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/policy/propose/proposetest"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// TestRun proposes from three watched repositories in one run: foo by
// replaces (a tag that is not semver, a pre-release, the head's own and
// a lower version passed over; two new versions chained), bar by
// skipRange with pre-releases taken, and baz, whose image's bundle
// belongs to another package, refused by the check with its findings.
func TestRun(t *testing.T) {
	reg := registrytest.New(t)
	digests := map[string]string{}
	push := func(repo, tag, pkg, name, version string) {
		digests[proposetest.PushBundle(t, reg, repo, tag, pkg, name, version)] = repo + ":" + tag
	}
	push("acme/foo-bundle", "latest", "foo", "foo.v1.2.0", "1.2.0")
	push("acme/foo-bundle", "v0.9.0", "foo", "foo.v0.9.0", "0.9.0")
	push("acme/foo-bundle", "v1.0.0", "foo", "foo.v1.0.0", "1.0.0")
	push("acme/foo-bundle", "v1.1.0-rc.1", "foo", "foo.v1.1.0-rc.1", "1.1.0-rc.1")
	push("acme/foo-bundle", "v1.1.0", "foo", "foo.v1.1.0", "1.1.0")
	push("acme/foo-bundle", "v1.2.0", "foo", "foo.v1.2.0", "1.2.0")
	push("acme/bar-bundle", "2.0.0-rc.1", "bar", "bar.v2.0.0-rc.1", "2.0.0-rc.1")
	push("acme/baz-bundle", "3.1.0", "qux", "qux.v3.1.0", "3.1.0")

	policyFile := fmt.Sprintf(`owners:
  bots: [release-bot]
propose:
  - package: foo
    repository: %[1]s/acme/foo-bundle   # tags that parse as semver; pre-releases skipped by default
    channels: [stable]
    graph: replaces                       # the new bundle replaces the channel head
    soak: 0s
  - package: bar
    repository: %[1]s/acme/bar-bundle
    channels: [fast]
    graph: skipRange
    soak: 0s
    prereleases: true
  - package: baz
    repository: %[1]s/acme/baz-bundle
    channels: [stable]
    graph: replaces
    soak: 0s
`, reg.Host)
	repo := changetest.NewRepo(t)
	base := repo.Commit("catalog", map[string]string{
		".catalogbot.yaml":         policyFile,
		"OWNERS":                   "approvers: [maintainer]\n",
		"catalog/foo/catalog.yaml": proposetest.Package("foo", "stable", "foo.v1.0.0", "1.0.0"),
		"catalog/bar/catalog.yaml": proposetest.Package("bar", "fast", "bar.v1.5.0", "1.5.0"),
		"catalog/baz/catalog.yaml": proposetest.Package("baz", "stable", "baz.v3.0.0", "3.0.0"),
	})

	rule, err := egress.New([]string{reg.Host}, nil)
	if err != nil {
		t.Fatal(err)
	}
	anonymous := authn.NewMultiKeychain()
	r, err := render.New(render.Options{RegistryOnly: true, Keychain: anonymous, Egress: rule})
	if err != nil {
		t.Fatal(err)
	}
	opts := propose.Options{
		Repo: repo.Dir, Branch: "propose/releases",
		Registry: propose.Registry{Keychain: anonymous, Egress: rule},
		Images:   &images.Options{Keychain: anonymous, Egress: rule},
		Renderer: r,
		Now:      func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	}

	t.Run("dry run", func(t *testing.T) {
		o := opts
		o.DryRun = true
		res, err := propose.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Added) != 4 || res.Branch != "" {
			t.Errorf("dry run added %d, branch %q; want 4 and none", len(res.Added), res.Branch)
		}
		if _, err := repo.Git.Reference("refs/heads/propose/releases", false); err == nil {
			t.Error("a dry run wrote the branch")
		}
	})

	// The App's way: one package, its commit written and no reference.
	t.Run("detached, one package", func(t *testing.T) {
		o := opts
		o.Branch, o.Detached, o.Packages = "", true, []string{"bar"}
		res, err := propose.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Branch != "" || len(res.Added) != 1 || res.Added[0].Package != "bar" || res.Added[0].Commit == "" || res.Added[0].Branch != "" {
			t.Fatalf("detached run: branch %q, added %+v; want bar alone, committed, on no branch", res.Branch, res.Added)
		}
		if len(res.Seen) != 1 || res.Seen[0] != (propose.Seen{Package: "bar", Version: "2.0.0-rc.1", Tag: "2.0.0-rc.1"}) {
			t.Errorf("seen %+v; want bar 2.0.0-rc.1 alone", res.Seen)
		}
		if _, err := repo.Git.CommitObject(plumbing.NewHash(res.Added[0].Commit)); err != nil {
			t.Errorf("the detached commit is not in the repository: %v", err)
		}
		if _, err := repo.Git.Reference("refs/heads/propose/releases", false); err == nil {
			t.Error("a detached run wrote a branch")
		}
	})

	res, err := propose.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch != opts.Branch {
		t.Fatalf("branch %q, want %q", res.Branch, opts.Branch)
	}
	tip, err := repo.Git.Reference("refs/heads/propose/releases", true)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := repo.Git.Head()
	if head.Hash().String() != base {
		t.Errorf("HEAD moved to %s", head.Hash())
	}

	// What is written validates as opm would, and pins every new bundle
	// by digest.
	_, _, tree, err := change.FromGit(repo.Dir, base, tip.Hash().String())
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := fs.Sub(tree, "catalog")
	if err != nil {
		t.Fatal(err)
	}
	v, err := fbc.Validate(context.Background(), catalog, fbc.Options{Images: true})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Valid() {
		t.Errorf("the proposed catalog is invalid: %s", v.OPMMessage)
	}
	for _, im := range v.Images {
		if im.Kind == fbc.BundleImage && !strings.Contains(im.Image, "@sha256:") {
			t.Errorf("bundle %s is not pinned by digest: %s", im.Bundle, im.Image)
		}
	}

	// Refusals come with the check's findings, with file and line.
	for _, a := range res.Added {
		if a.Package == "baz" {
			if a.Refused == "" || a.Commit != "" || len(a.Findings) == 0 {
				t.Errorf("baz: refused %q, commit %q, %d findings; want refused with findings and no commit", a.Refused, a.Commit, len(a.Findings))
			}
			for _, f := range a.Findings {
				if f.File == "" || f.Line == 0 {
					t.Errorf("finding %+v has no file and line", f)
				}
			}
		} else if a.Commit == "" || a.Refused != "" {
			t.Errorf("%s %s: commit %q, refused %q", a.Package, a.Version, a.Commit, a.Refused)
		}
	}

	var b bytes.Buffer
	j, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b.Write(j)
	b.WriteString("\n")
	c, _, _, err := change.FromGit(repo.Dir, base, tip.Hash().String())
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(c.Files, func(i, j int) bool { return c.Files[i].Path < c.Files[j].Path })
	for _, f := range c.Files {
		data, err := fs.ReadFile(tree, f.Path)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n== %s (%s)\n%s", f.Path, f.Status, data)
	}
	checkstest.Golden(t, "testdata/run.golden", normalise(b.Bytes(), reg.Host, digests, res))
}

// normalise takes out what differs between runs: the registry's port,
// digests (named by the tag pushed) and commit ids.
func normalise(b []byte, host string, digests map[string]string, res *propose.Result) []byte {
	s := strings.ReplaceAll(string(b), host, "REGISTRY")
	for d, name := range digests {
		s = strings.ReplaceAll(s, d, "<digest of "+name+">")
	}
	var commits []string
	for _, a := range res.Added {
		if a.Commit != "" && !slices.Contains(commits, a.Commit) {
			commits = append(commits, a.Commit)
		}
	}
	for i, c := range commits {
		s = strings.ReplaceAll(s, c, fmt.Sprintf("<commit %d>", i+1))
	}
	s = strings.ReplaceAll(s, res.Base, "<base>")
	return []byte(regexp.MustCompile(`sha256:0{64}`).ReplaceAllString(s, "sha256:0…0"))
}
