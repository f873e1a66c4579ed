package main

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
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
