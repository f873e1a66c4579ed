package change

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
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
			_, err := readHead(t, dir, "catalog/foo/catalog.yaml")
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
			if _, err := readHead(t, dir, "catalog/foo/catalog.yaml"); err != nil {
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

// TestPartialCloneFetch: with fetching on (SetFetch), a read of a file a
// partial clone left out fetches its blob from the promisor remote with
// git, and reads it verified; with fetching off, with the remote gone, or
// with a remote on the network and no rule that allows it, the read fails
// with an *ObjectError that names the path, the object, the remote and why
// nothing was fetched.
func TestPartialCloneFetch(t *testing.T) {
	t.Cleanup(func() { SetFetch(FetchOptions{}) })
	parent := t.TempDir()
	origin := filepath.Join(parent, "origin")
	GitCLI(t, parent, "", "init", "-q", "-b", "main", "origin")
	GitCLI(t, origin, "", "config", "uploadpack.allowFilter", "true")
	GitCLI(t, origin, "", "config", "uploadpack.allowAnySHA1InWant", "true")
	const content = "schema: olm.package\nname: foo\n"
	writeFile(t, filepath.Join(origin, "catalog", "foo", "catalog.yaml"), content)
	writeFile(t, filepath.Join(origin, "catalog", "bar", "catalog.yaml"), "schema: olm.package\nname: bar\n")
	GitCLI(t, origin, "", "add", ".")
	GitCLI(t, origin, "", "commit", "-q", "-m", "foo and bar")
	blob := GitCLI(t, origin, "", "rev-parse", "HEAD:catalog/foo/catalog.yaml")

	for _, tc := range []struct {
		name  string
		fetch FetchOptions
		setup func(dir string)
		want  []string // in the error; nil: the read succeeds
	}{
		{name: "fetched", fetch: FetchOptions{Enabled: true}},
		{name: "off", want: []string{"fetching is turned off"}},
		{name: "remote gone", fetch: FetchOptions{Enabled: true}, setup: func(dir string) {
			GitCLI(t, dir, "", "config", "remote.origin.url", "file://"+filepath.Join(parent, "gone"))
		}, want: []string{"fetching it failed", "git fetch of 1 object(s)"}},
		{name: "network without a rule", fetch: FetchOptions{Enabled: true}, setup: func(dir string) {
			GitCLI(t, dir, "", "config", "remote.origin.url", "https://127.0.0.1:1/origin.git")
		}, want: []string{"fetching it failed", "no rule for network access"}},
		{name: "network refused by the rule", fetch: FetchOptions{Enabled: true, Dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("refused: loopback address")
		}}, setup: func(dir string) {
			GitCLI(t, dir, "", "config", "remote.origin.url", "https://127.0.0.1:1/origin.git")
		}, want: []string{"fetching it failed", "remote 127.0.0.1: refused: loopback address"}},
		{name: "bound reached", fetch: FetchOptions{Enabled: true, MaxObjects: 1}, setup: func(dir string) {
			// One object fetched first, by another read.
			if _, err := readHead(t, dir, "catalog/bar/catalog.yaml"); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"fetching it failed", "bound of 1 objects"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "partial.git")
			GitCLI(t, parent, "", "clone", "-q", "--bare", "--filter=blob:none", "file://"+origin, dir)
			SetFetch(tc.fetch)
			if tc.setup != nil {
				tc.setup(dir)
			}
			got, err := readHead(t, dir, "catalog/foo/catalog.yaml")
			if tc.want == nil {
				if err != nil || string(got) != content {
					t.Fatalf("ReadFile = %q, %v; want the file fetched", got, err)
				}
				// It is in the clone now: git finds it without fetching.
				cmd := exec.Command("git", "-C", dir, "cat-file", "-e", blob)
				cmd.Env = append(os.Environ(), "GIT_NO_LAZY_FETCH=1")
				if err := cmd.Run(); err != nil {
					t.Errorf("blob %s is not in the clone after the read: %v", blob, err)
				}
				return
			}
			oe, ok := Unreadable(err)
			if !ok || !errors.Is(err, plumbing.ErrObjectNotFound) {
				t.Fatalf("ReadFile = %q, %v; want an *ObjectError of a missing object", got, err)
			}
			if oe.Path != "catalog/foo/catalog.yaml" || oe.Object != blob || oe.Promisor != "origin" {
				t.Errorf("ObjectError %+v; want the path, blob %s and remote origin", oe, blob)
			}
			msg := err.Error()
			for _, want := range append([]string{"catalog/foo/catalog.yaml", blob, `partial clone from remote "origin"`}, tc.want...) {
				if !strings.Contains(msg, want) {
					t.Errorf("%q does not say %q", msg, want)
				}
			}
		})
	}
}

// readHead reads name from the tree of HEAD of the repository at dir, as
// a check reads a file, and returns what the read returns.
func readHead(t *testing.T, dir, name string) ([]byte, error) {
	t.Helper()
	repo, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := TreeFS(repo, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return fs.ReadFile(tree, name)
}
