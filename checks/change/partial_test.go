package change

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestPartialClone: in a partial clone made by git (--filter=blob:none),
// reading a file whose blob was left out fails with an *ObjectError that
// names the path, the object and the promisor remote, and says how to
// fetch what is missing; in a complete clone the same read succeeds. The
// remote is found as git finds it: remote.<name>.promisor, or
// extensions.partialClone.
func TestPartialClone(t *testing.T) {
	parent := t.TempDir()
	origin := filepath.Join(parent, "origin")
	GitCLI(t, parent, "", "init", "-q", "-b", "main", "origin")
	GitCLI(t, origin, "", "config", "uploadpack.allowFilter", "true")
	GitCLI(t, origin, "", "commit", "-q", "--allow-empty", "-m", "root")
	writeFile(t, filepath.Join(origin, "catalog", "foo", "catalog.yaml"), "schema: olm.package\nname: foo\n")
	GitCLI(t, origin, "", "add", ".")
	GitCLI(t, origin, "", "commit", "-q", "-m", "foo")
	blob := GitCLI(t, origin, "", "rev-parse", "HEAD:catalog/foo/catalog.yaml")

	for _, tc := range []struct {
		name  string
		setup func(dir string)
	}{
		{"remote promisor", func(string) {}},
		{"extensions.partialClone", func(dir string) {
			GitCLI(t, dir, "", "config", "--unset", "remote.origin.promisor")
			GitCLI(t, dir, "", "config", "extensions.partialClone", "origin")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "partial.git")
			GitCLI(t, parent, "", "clone", "-q", "--bare", "--filter=blob:none", "file://"+origin, dir)
			tc.setup(dir)
			repo, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			tree, err := TreeFS(repo, "HEAD")
			if err != nil {
				t.Fatal(err)
			}
			_, err = fs.ReadFile(tree, "catalog/foo/catalog.yaml")
			oe, ok := Unreadable(err)
			if !ok || !errors.Is(err, plumbing.ErrObjectNotFound) {
				t.Fatalf("ReadFile = %v; want an *ObjectError of a missing object", err)
			}
			if oe.Path != "catalog/foo/catalog.yaml" || oe.Object != blob || oe.Promisor != "origin" {
				t.Errorf("ObjectError %+v; want the path, blob %s and remote origin", oe, blob)
			}
			msg := err.Error()
			for _, want := range []string{"catalog/foo/catalog.yaml", blob, "partial clone", "git -C " + dir + " cat-file -e " + blob, "fetch --refetch origin"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%q does not say %q", msg, want)
				}
			}
			// What the message says to run fetches it.
			GitCLI(t, dir, "", "cat-file", "-e", blob)
			repo, err = Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tree, err = TreeFS(repo, "HEAD"); err != nil {
				t.Fatal(err)
			}
			if _, err := fs.ReadFile(tree, "catalog/foo/catalog.yaml"); err != nil {
				t.Errorf("after the fetch: %v", err)
			}
		})
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
