package fbc_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

const validCatalog = `---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v0.1.0
---
schema: olm.bundle
package: foo
name: foo.v0.1.0
image: quay.io/example/foo-bundle:v0.1.0
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 0.1.0
`

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestHostileTrees covers trees that break the loader rather than the
// catalog: each must give a finding naming the path, never a crash, and the
// verdict opm gives (invalid).
func TestHostileTrees(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, dir string)
		wantFile string
		wantText string
		valid    bool
	}{
		{
			name: "symlink loop",
			setup: func(t *testing.T, dir string) {
				mustSymlink(t, "loop-b", filepath.Join(dir, "loop-a"))
				mustSymlink(t, "loop-a", filepath.Join(dir, "loop-b"))
			},
			wantFile: "loop-a",
			wantText: "too many levels of symbolic links",
		},
		{
			name: "symlink to a directory",
			setup: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
					t.Fatal(err)
				}
				mustSymlink(t, "real", filepath.Join(dir, "link"))
			},
			wantFile: "link",
			wantText: "is a directory",
		},
		{
			name: "symlink to a file is followed",
			setup: func(t *testing.T, dir string) {
				if err := os.Rename(filepath.Join(dir, "foo", "catalog.yaml"), filepath.Join(dir, "elsewhere.txt")); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ".indexignore"), []byte("elsewhere.txt\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				mustSymlink(t, "../elsewhere.txt", filepath.Join(dir, "foo", "catalog.yaml"))
			},
			valid: true,
		},
		{
			name: "directory named like a file",
			setup: func(t *testing.T, dir string) {
				if err := os.MkdirAll(filepath.Join(dir, "bar", "catalog.yaml"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			valid: true,
		},
		{
			name: "empty directory",
			setup: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			valid: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"foo/catalog.yaml": validCatalog})
			tc.setup(t, dir)
			res, err := fbc.Validate(context.Background(), os.DirFS(dir), fbc.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Valid() != tc.valid {
				t.Fatalf("valid = %v, want %v; findings %+v", res.Valid(), tc.valid, res.Findings)
			}
			if tc.valid {
				if len(res.Findings) != 0 {
					t.Fatalf("unexpected findings %+v", res.Findings)
				}
				return
			}
			found := false
			for _, f := range res.Findings {
				if f.File == tc.wantFile && strings.Contains(f.Message, tc.wantText) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no finding for %s containing %q: %+v", tc.wantFile, tc.wantText, res.Findings)
			}
		})
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

// failingFS returns an error for one path, standing in for an unreadable file
// (tests may run as root, where permission bits do not stop a read).
type failingFS struct {
	fstest.MapFS
	bad string
}

func (f failingFS) Open(name string) (fs.File, error) {
	if name == f.bad {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f.MapFS.Open(name)
}

func TestUnreadableFile(t *testing.T) {
	fsys := failingFS{MapFS: mapFS(map[string]string{
		"a/catalog.yaml": validCatalog,
		"b/catalog.yaml": "schema: olm.package\nname: bar\n",
	}), bad: "b/catalog.yaml"}
	res, err := fbc.Validate(context.Background(), fsys, fbc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid() {
		t.Fatal("a tree with an unreadable file must not be valid")
	}
	if want := "open b/catalog.yaml: permission denied"; res.OPMMessage != want {
		t.Errorf("opm message %q, want %q", res.OPMMessage, want)
	}
	if len(res.Findings) != 1 || res.Findings[0].File != "b/catalog.yaml" || res.Findings[0].Rule != "L0" {
		t.Errorf("findings %+v", res.Findings)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d"} {
		files[n+"/catalog.yaml"] = validCatalog
	}
	_, err := fbc.Validate(ctx, mapFS(files), fbc.Options{Concurrency: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
