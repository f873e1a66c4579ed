//go:build unix

package gitobj

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
)

// TestMapIndex: a pack index on the operating system's file system is
// mapped, byte for byte the file; one on any other file system is not,
// and the store reads it instead.
func TestMapIndex(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "--bare"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit-tree", "-m", "x", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}, {"repack", "-q", "-a"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	idx, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	if len(idx) == 0 {
		// commit-tree wrote a loose object that nothing references:
		// pack it by hand.
		out, err := exec.Command("sh", "-c", "cd "+dir+" && git rev-list --all --objects | git pack-objects -q objects/pack/pack; git cat-file --batch-all-objects --batch-check='%(objectname)' | git pack-objects -q objects/pack/pack").CombinedOutput()
		if err != nil {
			t.Fatalf("pack: %v\n%s", err, out)
		}
		idx, _ = filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	}
	if len(idx) == 0 {
		t.Fatal("no pack index")
	}
	want, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join("pack", filepath.Base(idx[0]))
	b, release, ok := mapIndex(osfs.New(filepath.Join(dir, "objects")), name)
	if !ok {
		t.Fatal("an index on the operating system's file system was not mapped")
	}
	if !bytes.Equal(b, want) {
		t.Error("the mapping differs from the file")
	}
	release()

	mem := memfs.New()
	if err := mem.MkdirAll("pack", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := mem.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(want)
	f.Close()
	if _, _, ok := mapIndex(mem, name); ok {
		t.Error("an index in memory was mapped")
	}
}
