package gitcache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestBrokenRepositoryIsRebuilt damages a cached repository as a process
// killed during a fetch (or a bad disk) leaves it, and checks that the
// next PullRequest or Branch call rebuilds it and succeeds.
func TestBrokenRepositoryIsRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir, head string)
	}{
		{"empty ref file", func(t *testing.T, dir, _ string) {
			write(t, filepath.Join(dir, "refs/remotes/origin/main"), "")
		}},
		{"garbage ref file", func(t *testing.T, dir, _ string) {
			write(t, filepath.Join(dir, "refs/remotes/origin/pull/1"), "\x00\x01not a ref")
		}},
		{"an empty ref of another pull request", func(t *testing.T, dir, _ string) {
			write(t, filepath.Join(dir, "refs/remotes/origin/pull/7"), "")
		}},
		{"unreadable packed-refs", func(t *testing.T, dir, _ string) {
			write(t, filepath.Join(dir, "packed-refs"), "# pack-refs with: peeled\nzzzz refs/heads/x\n")
		}},
		{"empty HEAD", func(t *testing.T, dir, _ string) {
			write(t, filepath.Join(dir, "HEAD"), "")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t, "sekrit")
			base := o.commit("refs/heads/main", "", map[string]string{"catalog/foo/index.yaml": "v1\n"})
			head := o.commit("refs/pull/1/head", base, map[string]string{"catalog/foo/index.yaml": "v2\n"})
			c, err := New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			src := Source{Repo: "o/r", URL: o.url(), Token: "sekrit"}
			ctx := context.Background()
			if _, err := c.PullRequest(ctx, src, "main", 1, head); err != nil {
				t.Fatal(err)
			}
			dir, _ := c.path(src.Repo)
			tc.damage(t, dir, head)
			if err := check(dir, []string{"refs/remotes/origin/main", "refs/remotes/origin/pull/1"}); !errors.Is(err, ErrBroken) {
				t.Fatalf("check after the damage = %v, want ErrBroken", err)
			}

			snap, err := c.PullRequest(ctx, src, "main", 1, head)
			if err != nil {
				t.Fatalf("PullRequest on the damaged cache: %v", err)
			}
			if got := read(t, snap.Head, "catalog/foo/index.yaml"); got != "v2\n" {
				t.Errorf("head file = %q", got)
			}
			if tip, err := c.Branch(ctx, src, "main"); err != nil || tip != base {
				t.Errorf("Branch = %s, %v; want %s", tip, err, base)
			}
			if _, err := os.Stat(dir + ".broken"); err != nil {
				t.Errorf("the broken repository was not moved aside: %v", err)
			}
			if err := c.Err(); err != nil {
				t.Errorf("Err = %v after the repair", err)
			}
		})
	}
}

// TestMissingObjectsRebuilt: a repository whose refs name objects its
// store lost (found at a start: a process's reads keep the packs they
// opened) is rebuilt by the next fetch.
func TestMissingObjectsRebuilt(t *testing.T) {
	o := newOrigin(t, "sekrit")
	base := o.commit("refs/heads/main", "", map[string]string{"catalog/foo/index.yaml": "v1\n"})
	head := o.commit("refs/pull/1/head", base, map[string]string{"catalog/foo/index.yaml": "v2\n"})
	c, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := Source{Repo: "o/r", URL: o.url(), Token: "sekrit"}
	ctx := context.Background()
	if _, err := c.PullRequest(ctx, src, "main", 1, head); err != nil {
		t.Fatal(err)
	}
	// The repository as the next start finds it, without its objects.
	from, _ := c.path(src.Repo)
	c2, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	to, _ := c2.path(src.Repo)
	err = filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if strings.HasPrefix(rel, "objects"+string(filepath.Separator)) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := check(to, []string{"refs/remotes/origin/pull/1"}); !errors.Is(err, ErrBroken) {
		t.Fatalf("check = %v, want ErrBroken", err)
	}
	snap, err := c2.PullRequest(ctx, src, "main", 1, head)
	if err != nil {
		t.Fatalf("PullRequest with the objects gone: %v", err)
	}
	if got := read(t, snap.Head, "catalog/foo/index.yaml"); got != "v2\n" {
		t.Errorf("head file = %q", got)
	}
}

// TestCacheRefsAreWrittenWhole: the refs a fetch writes are whole files,
// and no temporary file is left beside them.
func TestCacheRefsAreWrittenWhole(t *testing.T) {
	o := newOrigin(t, "sekrit")
	base := o.commit("refs/heads/main", "", map[string]string{"a": "1\n"})
	c, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := Source{Repo: "o/r", URL: o.url(), Token: "sekrit"}
	if _, err := c.Branch(context.Background(), src, "main"); err != nil {
		t.Fatal(err)
	}
	dir, _ := c.path(src.Repo)
	data, err := os.ReadFile(filepath.Join(dir, "refs/remotes/origin/main"))
	if err != nil || strings.TrimSpace(string(data)) != base {
		t.Fatalf("ref file = %q, %v; want %s", data, err, base)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, tmpRefPrefix+"*")); len(left) > 0 {
		t.Errorf("temporary ref files left: %v", left)
	}
	// A temporary file a killed writer left is not read as a ref.
	write(t, filepath.Join(dir, tmpRefPrefix+"123"), "")
	if err := check(dir, nil); err != nil {
		t.Errorf("check with a left temporary file: %v", err)
	}
	if !plumbing.IsHash(base) {
		t.Fatal(base)
	}
}

// TestUnrepairableCacheIsReported: a repository that cannot be rebuilt
// (its directory cannot be replaced) makes Err say so until a fetch works.
func TestUnrepairableCacheIsReported(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes read-only directories")
	}
	o := newOrigin(t, "sekrit")
	o.commit("refs/heads/main", "", map[string]string{"a": "1\n"})
	c, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := Source{Repo: "o/r", URL: o.url(), Token: "sekrit"}
	ctx := context.Background()
	if _, err := c.Branch(ctx, src, "main"); err != nil {
		t.Fatal(err)
	}
	dir, _ := c.path(src.Repo)
	write(t, filepath.Join(dir, "refs/remotes/origin/main"), "")
	owner := filepath.Dir(dir)
	if err := os.Chmod(owner, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(owner, 0o700)
	if _, err := c.Branch(ctx, src, "main"); err == nil {
		t.Fatal("a fetch into a broken repository that cannot be moved aside succeeded")
	}
	if c.Err() == nil {
		t.Fatal("Err is nil while the cache cannot be repaired")
	}
	os.Chmod(owner, 0o700)
	if _, err := c.Branch(ctx, src, "main"); err != nil {
		t.Fatal(err)
	}
	if err := c.Err(); err != nil {
		t.Errorf("Err = %v after a fetch worked", err)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
