package main

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

// TestActionRootsCannotOverlay: the Action refuses a pull request that
// defines a package of one root of a catalog again in another root, by
// that root's owner or by a stranger where the root approves unowned
// directories by itself; the check names the second definition.
func TestActionRootsCannotOverlay(t *testing.T) {
	bar := strings.ReplaceAll(checkCatalog, "foo", "bar")
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		".catalogbot.yaml":           "merge:\n  enabled: true\ncatalog:\n  roots: [catalog, incubator]\n",
		"OWNERS":                     "approvers:\n  - root-admin\n",
		"catalog/.indexignore":       "OWNERS\n",
		"catalog/bar/OWNERS":         "approvers:\n  - bob\n",
		"catalog/bar/catalog.yaml":   bar,
		"incubator/.indexignore":     "OWNERS\n",
		"incubator/OWNERS":           "approvers:\n  - carol\noptions:\n  auto_approve_unowned_subfolders: true\n",
		"incubator/foo/catalog.yaml": checkCatalog,
	})
	r.Branch("attack", base)
	r.Commit("bar, ours now", map[string]string{
		"incubator/bar/catalog.yaml": strings.ReplaceAll(bar, "bar-bundle:v1.0.0", "bar-bundle:v9.9.9"),
	})
	r.Checkout("main")
	for _, author := range []string{"carol", "mallory"} {
		t.Run(author, func(t *testing.T) {
			f := inActions(t, r.Dir, writePREvent(t, r, "attack", author, nil))
			res := ownersCLI(t, t.TempDir(), "check")
			if res.code != exitInvalid {
				t.Fatalf("exit %d, want %d\n%s%s", res.code, exitInvalid, res.stdout, res.stderr)
			}
			if !strings.Contains(res.stdout, "incubator/bar/catalog.yaml") {
				t.Errorf("the check does not name the second definition:\n%s", res.stdout)
			}
			if out := readStepFile(t, f.output); !strings.Contains(out, "valid=false\n") || !strings.Contains(out, "mergeable=false\n") {
				t.Errorf("$GITHUB_OUTPUT:\n%s", out)
			}
		})
	}
}

// TestPublishRepoCatalogs: publish --repo publishes every catalog of the
// policy to its own target, from a commit with --rev, and --catalog picks
// one; --image is refused where it would name several catalogs' image.
func TestPublishRepoCatalogs(t *testing.T) {
	isolateCredentials(t)
	host := registrytest.New(t).Host
	r := changetest.NewRepo(t)
	r.Commit("catalogs", map[string]string{
		".catalogbot.yaml":                "catalogs:\n  - each: catalogs/v4.*\npublish:\n  image: \"" + host + "/acme/index:{catalog}\"\n  base: scratch\n",
		"catalogs/v4.17/foo/catalog.yaml": checkCatalog,
		"catalogs/v4.18/foo/catalog.yaml": checkCatalog,
	})
	one := cli(t, nil, "publish", "--repo", r.Dir, "--rev", "main", "--catalog", "v4.18")
	if one.code != exitOK || !strings.Contains(one.stdout, "v4.18: "+host+"/acme/index:v4.18\n") || strings.Contains(one.stdout, "v4.17") {
		t.Fatalf("--catalog v4.18: exit %d\n%s%s", one.code, one.stdout, one.stderr)
	}
	registryDigest(t, host+"/acme/index:v4.18")

	all := cli(t, nil, "publish", "--repo", r.Dir, "--rev", "main")
	if all.code != exitOK || strings.Count(all.stdout, " published\n")+strings.Count(all.stdout, " unchanged\n") != 2 {
		t.Fatalf("every catalog: exit %d\n%s%s", all.code, all.stdout, all.stderr)
	}
	if !strings.Contains(all.stdout, " unchanged\n") || !strings.Contains(all.stdout, " published\n") {
		t.Errorf("want v4.18 unchanged and v4.17 published:\n%s", all.stdout)
	}
	// The same catalog content in both: one digest under both tags.
	if a, b := registryDigest(t, host+"/acme/index:v4.17"), registryDigest(t, host+"/acme/index:v4.18"); a != b {
		t.Errorf("the same catalog published as %s and %s", a, b)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--catalog", "v9.9"}, `has no catalog "v9.9"; it has v4.17, v4.18`},
		{[]string{"--image", host + "/acme/other:x"}, "publishes 2 catalogs; pick one with --catalog"},
	} {
		res := cli(t, nil, append([]string{"publish", "--repo", r.Dir, "--rev", "main"}, tc.args...)...)
		if res.code != exitError || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want usage with %q", tc.args, res.code, res.stderr, tc.want)
		}
	}
}

// TestCheckMarkdown: check -o markdown prints the job summary the Action
// writes, outside Actions too.
func TestCheckMarkdown(t *testing.T) {
	noActions(t)
	r := checkRepo(t)
	res := ownersCLI(t, r.Dir, "check", "--base", "main", "--head", "bad", "--author", "alice", "-o", "markdown")
	if res.code != exitInvalid || res.stderr != "" {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"## catalogbot check", "fbc", "catalog/foo/catalog.yaml"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "::error") {
		t.Errorf("the markdown holds workflow commands:\n%s", res.stdout)
	}
}
