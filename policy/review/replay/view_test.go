package replay

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/go-git/go-git/v5/plumbing"
)

// brokenFS is a tree whose file "gone" names an object the repository
// lacks, as in a partial clone.
// It has only Open, so every read goes through it.
type brokenFS struct{ files fstest.MapFS }

func (b brokenFS) Open(name string) (fs.File, error) {
	if name == "gone" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("blob 1234: %w", plumbing.ErrObjectNotFound)}
	}
	return b.files.Open(name)
}

func TestViewPolicy(t *testing.T) {
	tree := fstest.MapFS{
		".catalogbot.yaml":      {Data: []byte("base policy\n")},
		"catalog/etcd/pkg.yaml": {Data: []byte("schema: olm.package\n")},
		"link":                  {Data: []byte("catalog"), Mode: fs.ModeSymlink},
	}
	for _, tc := range []struct {
		name string
		tree fstest.MapFS
	}{
		{"replaces the base's", tree},
		{"where the base has none", fstest.MapFS{"catalog/etcd/pkg.yaml": tree["catalog/etcd/pkg.yaml"]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := view{fsys: tc.tree, policy: []byte("trial\n")}
			if err := fstest.TestFS(v, ".catalogbot.yaml", "catalog/etcd/pkg.yaml"); err != nil {
				t.Fatal(err)
			}
			data, err := fs.ReadFile(v, ".catalogbot.yaml")
			if err != nil || string(data) != "trial\n" {
				t.Errorf("policy file = %q, %v; want the trial's", data, err)
			}
			f, err := v.Open(".catalogbot.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if data, err := io.ReadAll(f); err != nil || string(data) != "trial\n" {
				t.Errorf("policy file opened = %q, %v; want the trial's", data, err)
			}
			entries, err := fs.ReadDir(v, ".")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if n := slices.Index(names, ".catalogbot.yaml"); n < 0 || slices.Index(names[n+1:], ".catalogbot.yaml") >= 0 || !slices.IsSorted(names) {
				t.Errorf("root lists %v; want the policy file once, sorted", names)
			}
		})
	}
	// Without a trial the base's policy shows through, and symbolic links
	// stay links.
	v := view{fsys: tree}
	if data, _ := fs.ReadFile(v, ".catalogbot.yaml"); string(data) != "base policy\n" {
		t.Errorf("policy file = %q, want the base's", data)
	}
	if fi, err := fs.Lstat(v, "link"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(link) = %v, %v; want a symbolic link", fi, err)
	}
	if target, err := fs.ReadLink(v, "link"); err != nil || target != "catalog" {
		t.Errorf("ReadLink(link) = %q, %v", target, err)
	}
}

// TestViewErrors: the view hands on the tree's errors as they are, so that
// the review judges a read it cannot make as it would without the view.
func TestViewErrors(t *testing.T) {
	v := view{fsys: brokenFS{files: fstest.MapFS{"here": {Data: []byte("x")}}}, policy: []byte("trial\n")}
	for name, read := range map[string]func() error{
		"ReadFile": func() error { _, err := fs.ReadFile(v, "gone"); return err },
		"Stat":     func() error { _, err := fs.Stat(v, "gone"); return err },
		"Open":     func() error { _, err := v.Open("gone"); return err },
	} {
		if err := read(); !errors.Is(err, plumbing.ErrObjectNotFound) {
			t.Errorf("%s: error %v hides the missing object", name, err)
		}
	}
	if b, err := fs.ReadFile(v, "here"); err != nil || string(b) != "x" {
		t.Errorf("ReadFile(here) = %q, %v", b, err)
	}
}
