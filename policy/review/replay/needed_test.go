package replay

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
)

// catalogsRepo is a repository of three catalogs, named, no version series, and a
// last commit that changes the package of two of them. It returns the
// repository, the last commit and the blob ids by path at it.
func catalogsRepo(t *testing.T) (*changetest.Repo, string, map[string]string) {
	t.Helper()
	r := changetest.NewRepo(t)
	file := func(v, rev string) string { return fbctest.Foo + "# " + v + " " + rev + "\n" }
	r.Commit("root", map[string]string{"README.md": "catalogs\n"})
	r.Commit("catalogs", map[string]string{
		".catalogbot.yaml":                "catalogs:\n  - each: catalogs/*\n",
		"OWNERS":                          "approvers: [root-owner]\n",
		"catalogs/alpha/foo/catalog.yaml": file("alpha", "a"),
		"catalogs/beta/foo/catalog.yaml":  file("beta", "a"),
		"catalogs/gamma/foo/catalog.yaml": file("gamma", "a"),
	})
	head := r.Commit("foo: a change in beta and gamma", map[string]string{
		"catalogs/beta/foo/catalog.yaml":  file("beta", "b"),
		"catalogs/gamma/foo/catalog.yaml": file("gamma", "b"),
	})
	ids := map[string]string{}
	for _, v := range []string{"alpha", "beta", "gamma"} {
		rev := "b"
		if v == "alpha" {
			rev = "a"
		}
		ids["catalogs/"+v+"/foo/catalog.yaml"] = plumbing.ComputeHash(plumbing.BlobObject, []byte(file(v, rev))).String()
	}
	return r, head, ids
}

func removeObject(t *testing.T, dir, id string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, ".git", "objects", id[:2], id[2:])); err != nil {
		t.Fatal(err)
	}
}

// TestUnreadableOnlyNeeded: an object missing in a catalog the commit
// does not touch is a read `catalogbot check` does not need, so the commit
// is judged, as the check judges it.
func TestUnreadableOnlyNeeded(t *testing.T) {
	r, head, ids := catalogsRepo(t)
	removeObject(t, r.Dir, ids["catalogs/alpha/foo/catalog.yaml"])
	rep, err := Run(context.Background(), r.Dir, Options{Last: 1, Now: tick()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Commits) != 1 || rep.Commits[0].SHA != head {
		t.Fatalf("commits %+v, want %s alone", rep.Commits, head)
	}
	c := rep.Commits[0]
	if c.Unreadable != nil {
		t.Fatalf("unreadable %+v: a read the check does not make", c.Unreadable)
	}
	if len(c.Reviews) != 1 {
		t.Fatalf("reviews %+v", c.Reviews)
	}
	for _, ck := range c.Reviews[0].Checks {
		if ck.Name == "fbc" && ck.Conclusion != "success" {
			t.Errorf("fbc %s: %s", ck.Conclusion, ck.Summary)
		}
	}
}

// TestUnreadableNeeded: objects missing in both catalogs the commit
// touches make it unreadable, named by the first read the review needed
// in its own order (the fbc check, its catalogs in order, the head first),
// the same on every run.
func TestUnreadableNeeded(t *testing.T) {
	r, head, ids := catalogsRepo(t)
	removeObject(t, r.Dir, ids["catalogs/beta/foo/catalog.yaml"])
	removeObject(t, r.Dir, ids["catalogs/gamma/foo/catalog.yaml"])
	var first *Unreadable
	for i := range 4 {
		rep, err := Run(context.Background(), r.Dir, Options{Last: 1, Now: tick()})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Commits[0]
		if c.SHA != head || c.Unreadable == nil || c.Reviews != nil {
			t.Fatalf("commit %+v, want %s unreadable, without reviews", c, head)
		}
		if s := rep.Summaries[0]; s.Unreadable != 1 || len(s.ContentFailures) != 0 {
			t.Errorf("summary %+v: want one unreadable commit and no content failure", s)
		}
		u := *c.Unreadable
		want := Unreadable{Path: "head:catalogs/beta/foo/catalog.yaml", Object: ids["catalogs/beta/foo/catalog.yaml"], Check: "fbc"}
		if u.Path != want.Path || u.Object != want.Object || u.Check != want.Check {
			t.Errorf("run %d: unreadable %+v, want %+v", i, u, want)
		}
		if first == nil {
			first = &u
		} else if !reflect.DeepEqual(*first, u) {
			t.Errorf("run %d: %+v, first run %+v", i, u, *first)
		}
	}
}

// TestRunAlternates replays a bare clone whose objects are in its
// origin's store (git clone --shared), as `catalogbot check` reads one.
func TestRunAlternates(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("this test clones with the git CLI, which is not installed: " + err.Error())
	}
	r, head, _ := catalogsRepo(t)
	dir := filepath.Join(t.TempDir(), "shared.git")
	cmd := exec.Command("git", "clone", "-q", "--bare", "--shared", r.Dir, dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	rep, err := Run(context.Background(), dir, Options{Last: 1, Now: tick()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Commits) != 1 || rep.Commits[0].SHA != head || rep.Commits[0].Unreadable != nil {
		t.Errorf("commits %+v; want %s reviewed", rep.Commits, head)
	}
}
