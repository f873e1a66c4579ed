package change_test

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/change/gitobj"
)

// TestFromGitDeltaChain reads catalogs/v4.22/sailoperator/catalog.yaml of
// community-operators-prod, stored as the last of a chain of deltas over
// 1 MiB (gitobj/testdata/delta-chain), through FromGit's tree: it must be
// the blob git named, whole and streamed.
func TestFromGitDeltaChain(t *testing.T) {
	dir := t.TempDir()
	change.GitCLI(t, dir, "", "init", "-q", "--bare")
	src := filepath.Join("gitobj", "testdata", "delta-chain")
	names, err := filepath.Glob(filepath.Join(src, "pack-*"))
	if err != nil || len(names) != 2 {
		t.Fatalf("pack files in %s: %v %v", src, names, err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "objects", "pack", filepath.Base(name)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const blob = "447a09fd68dcb4bf090af3c9be6aa312c7f9b13f"
	tree := change.GitCLI(t, dir, "100644 blob "+blob+"\tcatalog.yaml\n", "mktree")
	commit := change.GitCLI(t, dir, "", "commit-tree", "-m", "sailoperator", tree)

	_, _, head, err := change.FromGit(dir, commit, commit)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := fs.ReadFile(head, "catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := head.Open("catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	streamed, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	const want = "4be0b8888ce3d69d9b9190cf38c3cb753e880a2c23748d620e814e497c09b335"
	for name, b := range map[string][]byte{"ReadFile": whole, "Open+Read": streamed} {
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: %d bytes with sha256 %s, want %s", name, len(b), got, want)
		}
	}
}

// TestMisreadBlob replaces a blob's stored bytes with other bytes of the
// same size and expects every read of it through a tree to fail with an
// error that names the path and the object, and wraps ErrCorruptObject.
func TestMisreadBlob(t *testing.T) {
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{"a/catalog.yaml": "schema: olm.package\nname: foo\n"})
	head := r.Commit("head", map[string]string{"a/catalog.yaml": "schema: olm.package\nname: bar\n"})
	id := plumbing.ComputeHash(plumbing.BlobObject, []byte("schema: olm.package\nname: bar\n")).String()
	loose := filepath.Join(r.Dir, ".git", "objects", id[:2], id[2:])
	if _, err := os.Stat(loose); err != nil {
		t.Fatalf("the head's blob is not where the test expects it: %v", err)
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte("blob 30\x00schema: olm.package\nname: baz\n"))
	w.Close()
	os.Chmod(loose, 0o644)
	if err := os.WriteFile(loose, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	_, baseFS, headFS, err := change.FromGit(r.Dir, base, head)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile(baseFS, "a/catalog.yaml"); err != nil {
		t.Errorf("the base's blob is intact: %v", err)
	}
	reads := map[string]func() error{
		"ReadFile": func() error { _, err := fs.ReadFile(headFS, "a/catalog.yaml"); return err },
		"Open+Read": func() error {
			f, err := headFS.Open("a/catalog.yaml")
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.ReadAll(f)
			return err
		},
	}
	for name, read := range reads {
		err := read()
		if !errors.Is(err, change.ErrCorruptObject) {
			t.Fatalf("%s: %v, want an error wrapping ErrCorruptObject", name, err)
		}
		var me *gitobj.MismatchError
		if !errors.As(err, &me) || me.Object.String() != id {
			t.Errorf("%s: %v, want a *gitobj.MismatchError for %s", name, err, id)
		}
		if !strings.Contains(err.Error(), "a/catalog.yaml") || !strings.Contains(err.Error(), id) {
			t.Errorf("%s: %q does not name the path and the object", name, err)
		}
	}
}
