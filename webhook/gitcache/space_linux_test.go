package gitcache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// smallFS mounts a tmpfs of size bytes for the test, which it can fill: a
// full disk without filling the machine's. Mounting needs root; without
// it the test is skipped, and fails under CI=true only when CI runs as
// root (where the mount must work).
func smallFS(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: mounting a small file system to fill needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)+",mode=0700"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a tmpfs as root: %v", err)
		}
		t.Skipf("skipping: cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file in dir until the file system is full and returns
// its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
}

// TestWritableTellsAFullDisk: the probe fails while the cache's file
// system is full and passes once space is back, its answer kept for
// probeTTL in between.
func TestWritableTellsAFullDisk(t *testing.T) {
	dir := smallFS(t, 1<<20)
	c, err := New(filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	c.probe.now = func() time.Time { return now }
	if err := c.Writable(); err != nil {
		t.Fatalf("an empty cache: %v", err)
	}
	ballast := fill(t, dir)
	if err := c.Writable(); err != nil {
		t.Fatalf("within %s of a probe that passed, its answer is kept: %v", probeTTL, err)
	}
	now = now.Add(probeTTL)
	err = c.Writable()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a full disk: Writable() = %v, want ENOSPC", err)
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	now = now.Add(probeTTL)
	if err := c.Writable(); err != nil {
		t.Fatalf("space back: %v", err)
	}
	// The probe leaves nothing behind.
	ents, _ := os.ReadDir(c.Dir())
	if len(ents) != 0 {
		t.Errorf("the cache holds %d entries after the probes, want none", len(ents))
	}
}

// TestUnrepairedCacheHealsWithoutAFetch: a repository found broken while
// the disk is full cannot be rebuilt, and Err says so; once the disk has
// room, Err tries the rebuild again and clears, with no fetch (a replica
// not ready may be given none).
func TestUnrepairedCacheHealsWithoutAFetch(t *testing.T) {
	dir := smallFS(t, 1<<20)
	o := newOrigin(t, "sekrit")
	o.commit("refs/heads/main", "", map[string]string{"a": "1\n"})
	c, err := New(filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	c.probe.now = func() time.Time { return now }
	src := Source{Repo: "o/r", URL: o.url(), Token: "sekrit"}
	ctx := context.Background()
	if _, err := c.Branch(ctx, src, "main"); err != nil {
		t.Fatal(err)
	}
	repo, _ := c.path(src.Repo)
	// Broken as a killed fetch leaves it, found by a fetch on a full disk.
	if err := os.WriteFile(filepath.Join(repo, "HEAD"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ballast := fill(t, dir)
	_, ferr := c.Branch(ctx, src, "main")
	if ferr == nil {
		t.Fatal("a fetch on a full disk succeeded")
	}
	if c.Err() == nil {
		t.Logf("the fetch: %v", ferr)
		t.Fatal("Err is nil while the repository could not be rebuilt")
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if err := c.Err(); err == nil {
		t.Fatalf("within %s of the last try, Err tried again", probeTTL)
	}
	now = now.Add(probeTTL)
	if err := c.Err(); err != nil {
		t.Fatalf("the disk has room again, yet Err = %v", err)
	}
	if _, err := c.Branch(ctx, src, "main"); err != nil {
		t.Fatalf("a fetch after the repair: %v", err)
	}
}
