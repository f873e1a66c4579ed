package publish_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/publisher/publish"
)

// TestPublishUnreadable: a catalog file whose git object is missing (a
// partial clone) stops the publish with an error that names the file by
// its path in the repository and the object, not by its path in the
// catalog, which finds nothing in the repository.
func TestPublishUnreadable(t *testing.T) {
	r := changetest.NewRepo(t)
	content := strings.ReplaceAll(fbctest.Foo, "foo", "stackgres-community")
	head := r.Commit("catalog", map[string]string{"catalogs/v4.12/stackgres-community/catalog.yaml": content})
	id := plumbing.ComputeHash(plumbing.BlobObject, []byte(content)).String()
	if err := os.Remove(filepath.Join(r.Dir, ".git", "objects", id[:2], id[2:])); err != nil {
		t.Fatal(err)
	}
	repo, err := change.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := change.TreeFS(repo, head)
	if err != nil {
		t.Fatal(err)
	}
	res, err := publish.Publish(context.Background(), publish.Source{Tree: tree, Roots: []string{"catalogs/v4.12"}}, options("oci:"+filepath.Join(t.TempDir(), "image")))
	if err == nil {
		t.Fatalf("published %+v from a catalog file nobody read", res)
	}
	if !errors.Is(err, plumbing.ErrObjectNotFound) {
		t.Errorf("error %v does not say the object is missing", err)
	}
	msg := err.Error()
	for _, want := range []string{"catalogs/v4.12/stackgres-community/catalog.yaml", id} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %s", msg, want)
		}
	}
	if strings.HasPrefix(strings.TrimPrefix(msg, "read the catalog: "), "open stackgres-community/") {
		t.Errorf("error %q names the file by its path in the catalog", msg)
	}
}
