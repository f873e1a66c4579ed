package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
)

// TestCheckMissingObject: `catalogbot check` of a change whose catalog
// file's blobs are missing on both sides (a partial clone) does not call
// the catalog valid with the failure to read "already on the base
// branch": it could not judge, names the file and the object, and the
// change is not mergeable.
func TestCheckMissingObject(t *testing.T) {
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		"OWNERS":                   "approvers: [alice]\n",
		"catalog/foo/catalog.yaml": fbctest.Foo,
	})
	head := r.Commit("head", map[string]string{"catalog/foo/catalog.yaml": fbctest.Foo + "\n"})
	var ids []string
	for _, content := range []string{fbctest.Foo, fbctest.Foo + "\n"} {
		id := plumbing.ComputeHash(plumbing.BlobObject, []byte(content)).String()
		ids = append(ids, id)
		if err := os.Remove(filepath.Join(r.Dir, ".git", "objects", id[:2], id[2:])); err != nil {
			t.Fatal(err)
		}
	}
	res := cli(t, nil, "check", "--repo", r.Dir, "--base", base, "--head", head, "--author", "alice", "--images=false")
	if res.code != exitInvalid {
		t.Errorf("exit %d, want %d\n%s%s", res.code, exitInvalid, res.stdout, res.stderr)
	}
	if strings.Contains(res.stdout, "The catalog is valid") || strings.Contains(res.stdout, "already on the base branch") {
		t.Errorf("the output calls a file nobody read valid:\n%s", res.stdout)
	}
	object := strings.Contains(res.stdout, ids[0]) || strings.Contains(res.stdout, ids[1])
	if !object || !strings.Contains(res.stdout, "catalog/foo/catalog.yaml") || !strings.Contains(res.stdout, "not in the repository") ||
		!strings.Contains(res.stdout, "Fetch the git objects") {
		t.Errorf("the output does not name the file and its object, or how to go on:\n%s", res.stdout)
	}
}
