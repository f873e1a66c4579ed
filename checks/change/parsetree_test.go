package change

import (
	"reflect"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
)

// TestParseTree decodes every tree of a repository with parseTree and
// with go-git's decoder, which must agree, and rejects malformed trees.
func TestParseTree(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Commit("one", map[string]string{
		"OWNERS":                       "approvers: [a]\n",
		"catalog/foo/catalog.yaml":     "x\n",
		"catalog/foo/sub/deep/a.json":  "{}\n",
		"catalog/bar baz/ünïcode.yaml": "y\n",
	})
	repo, err := Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	store := objectStore(repo)
	iter, err := r.Git.Storer.IterEncodedObjects(plumbing.TreeObject)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		want, err := object.GetTree(r.Git.Storer, o.Hash())
		if err != nil {
			return err
		}
		_, raw, err := store.Read(o.Hash())
		if err != nil {
			return err
		}
		got, err := parseTree(o.Hash(), raw)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, want.Entries) {
			t.Errorf("tree %s:\n%+v\nwant\n%+v", o.Hash(), got, want.Entries)
		}
		n++
		return nil
	})
	if err != nil && err != storer.ErrStop {
		t.Fatal(err)
	}
	if n < 5 {
		t.Errorf("compared %d trees, want at least 5", n)
	}

	bad := map[string]string{
		"no space":       "100644name\x00" + string(make([]byte, 20)),
		"short id":       "100644 name\x00" + string(make([]byte, 19)),
		"non-octal mode": "100694 name\x00" + string(make([]byte, 20)),
		"no name end":    "100644 name",
	}
	for name, raw := range bad {
		if e, err := parseTree(plumbing.ZeroHash, []byte(raw)); err == nil {
			t.Errorf("%s: parsed as %+v", name, e)
		}
	}
	if e, err := parseTree(plumbing.ZeroHash, []byte("40000 d\x00"+string(make([]byte, 20)))); err != nil || e[0].Mode != filemode.Dir {
		t.Errorf("a directory entry: %+v, %v", e, err)
	}
}
