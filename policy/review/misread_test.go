package review

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
)

// TestEvaluateMisread stores other bytes under the id of a catalog file
// the pull request changes (or of one it leaves alone) and expects no
// outcome at all: an error naming the path and the object, never a
// verdict, findings included, on bytes that are not the repository's.
func TestEvaluateMisread(t *testing.T) {
	broken := strings.Replace(fbctest.Foo, "foo", "fxo", 1) // same size, invalid
	tests := []struct {
		name, path, content string
	}{
		{"a changed file", "catalog/foo/catalog.yaml", fbctest.Foo + "\n"},
		{"OWNERS on the base", "catalog/foo/OWNERS", "approvers: [alice]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			base := r.Commit("base", map[string]string{
				"OWNERS":                   "approvers: [root-owner]\n",
				"catalog/foo/OWNERS":       "approvers: [alice]\n",
				"catalog/foo/catalog.yaml": fbctest.Foo,
				"catalog/foo/.indexignore": "OWNERS\n",
			})
			head := r.Commit("head", map[string]string{"catalog/foo/catalog.yaml": fbctest.Foo + "\n"})

			// Without the misread the change is judged.
			c, b, h, err := change.FromGit(r.Dir, base, head)
			if err != nil {
				t.Fatal(err)
			}
			c.Author = "alice"
			if _, err := Evaluate(context.Background(), &PR{Change: c, Base: b, Head: h}); err != nil {
				t.Fatalf("intact repository: %v", err)
			}

			id := plumbing.ComputeHash(plumbing.BlobObject, []byte(tt.content)).String()
			other := broken
			if tt.path != "catalog/foo/catalog.yaml" {
				other = "approvers: [mallo]\n"
			}
			other += strings.Repeat("\n", len(tt.content)-len(other))
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			w.Write([]byte("blob " + strconv.Itoa(len(other)) + "\x00" + other))
			w.Close()
			loose := filepath.Join(r.Dir, ".git", "objects", id[:2], id[2:])
			os.Chmod(loose, 0o644)
			if err := os.WriteFile(loose, z.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}

			c, b, h, err = change.FromGit(r.Dir, base, head)
			if err != nil {
				t.Fatal(err)
			}
			c.Author = "alice"
			o, err := Evaluate(context.Background(), &PR{Change: c, Base: b, Head: h})
			if !errors.Is(err, change.ErrCorruptObject) {
				t.Fatalf("Evaluate = %+v, %v; want no outcome and an error wrapping ErrCorruptObject", o, err)
			}
			if o != nil {
				t.Errorf("an outcome beside the error: %+v", o)
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), id) {
				t.Errorf("%q does not name %s and %s", err, tt.path, id)
			}
		})
	}
}
