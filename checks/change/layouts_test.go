package change

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryLayouts opens, with the git CLI's own layouts, the
// repositories whose objects or refs live elsewhere: a bare clone whose
// objects are in alternates (--shared, --reference) and a linked work
// tree, whose refs and objects are in its common directory. Each resolves
// HEAD, describes the change and reads both trees as the origin does.
func TestRepositoryLayouts(t *testing.T) {
	parent := t.TempDir()
	origin := filepath.Join(parent, "origin")
	GitCLI(t, parent, "", "init", "-q", "-b", "main", "origin")
	writeFile(t, filepath.Join(origin, "catalog", "foo", "catalog.yaml"), "schema: olm.package\nname: foo\n")
	GitCLI(t, origin, "", "add", ".")
	GitCLI(t, origin, "", "commit", "-q", "-m", "foo")
	writeFile(t, filepath.Join(origin, "catalog", "foo", "catalog.yaml"), "schema: olm.package\nname: foo\ndefaultChannel: stable\n")
	GitCLI(t, origin, "", "commit", "-q", "-am", "foo: stable")
	GitCLI(t, origin, "", "gc", "-q")
	head := GitCLI(t, origin, "", "rev-parse", "HEAD")

	for _, tc := range []struct {
		name string
		make func(dir string)
	}{
		{"clone --shared --bare", func(dir string) { GitCLI(t, parent, "", "clone", "-q", "--bare", "--shared", origin, dir) }},
		{"clone --reference --bare", func(dir string) {
			GitCLI(t, parent, "", "clone", "-q", "--bare", "--reference", origin, "file://"+origin, dir)
		}},
		{"clone --shared", func(dir string) { GitCLI(t, parent, "", "clone", "-q", "--shared", origin, dir) }},
		{"worktree add", func(dir string) { GitCLI(t, origin, "", "worktree", "add", "-q", "--detach", dir, "HEAD") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "repo")
			tc.make(dir)
			c, base, headFS, err := FromGit(dir, "HEAD~1", "HEAD")
			if err != nil {
				t.Fatal(err)
			}
			if c.HeadSHA != head || len(c.Files) != 1 || c.Files[0].Path != "catalog/foo/catalog.yaml" {
				t.Errorf("change %+v; want %s changing catalog/foo/catalog.yaml", c, head)
			}
			for name, fsys := range map[string]fs.FS{"base": base, "head": headFS} {
				if _, err := fs.ReadFile(fsys, "catalog/foo/catalog.yaml"); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
	}
}

// TestResolveSuggests: a revision that does not resolve names the branch
// or tag it is a typo of.
func TestResolveSuggests(t *testing.T) {
	dir := t.TempDir()
	GitCLI(t, dir, "", "init", "-q", "-b", "main")
	GitCLI(t, dir, "", "commit", "-q", "--allow-empty", "-m", "root")
	GitCLI(t, dir, "", "branch", "scratch")
	repo, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for rev, want := range map[string]string{"mian": `(did you mean "main"?)`, "scrach": `(did you mean "scratch"?)`} {
		if _, err := Resolve(repo, rev); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q) = %v; want an error saying %s", rev, err, want)
		}
	}
	if _, err := Resolve(repo, "v9.9.9"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Resolve(v9.9.9) = %v; want an error without a suggestion", err)
	}
}
